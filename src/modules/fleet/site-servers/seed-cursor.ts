import { sql } from 'kysely'
import type { Db } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'
import type { Cursor } from './service.ts'

/**
 * Stand-in for the outbox's `currentCursor` (modules/fleet/outbox) until it is merged: the newest change recorded.
 * Exact on SQLite (one writer: seq order is commit order); on PostgreSQL the outbox's own answers for transactions
 * still running.
 */
export async function newestOutboxCursor(db: Db, orgId: OrgId): Promise<Cursor> {
  const { rows } = await sql<{ tx: number | null; seq: number | null }>`
    select max(tx) as tx, max(seq) as seq from link_outbox where org_id = ${orgId}`.execute(db)
  return { tx: Number(rows[0]?.tx ?? 0), seq: Number(rows[0]?.seq ?? 0) }
}
