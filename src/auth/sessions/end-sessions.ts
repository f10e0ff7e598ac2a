import type { Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'
import { deleteSessionsOfAccount } from './store.ts'

/** Ends every browser session of an account at an organisation, inside the caller's transaction; returns how many. */
export async function endSessionsOfAccount(trx: Db, orgId: OrgId, accountId: string): Promise<number> {
  const result = await deleteSessionsOfAccount(trx, orgId, accountId)
  return Number(result.numDeletedRows)
}
