import type { Db, HistorianLiveBatchesTable } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'

/** The answer stored for a gateway's batch id in a site, if that batch id was pushed before. */
export async function findLiveAnswer(db: Db, orgId: OrgId, siteCode: string, batchKey: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('historian_live_batches')
    .select('answer')
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('batch_key', '=', batchKey)
    .executeTakeFirst()
  return row?.answer
}

export async function insertLiveBatch(db: Db, row: HistorianLiveBatchesTable): Promise<void> {
  await db.insertInto('historian_live_batches').values(row).execute()
}
