import type { Db, HistorianBatchesTable, HistorianLiveBatchesTable } from '../../../db/schema.ts'
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

/** The open live batch of a gateway (its `created_by`) in a site, if any (index historian_batches_open). */
export function findOpenLiveBatch(db: Db, orgId: OrgId, siteCode: string, createdBy: string): Promise<HistorianBatchesTable | undefined> {
  return db
    .selectFrom('historian_batches')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('created_by', '=', createdBy)
    .where('status', '=', 'open')
    .executeTakeFirst()
}

/** Closes an open batch: complete from now on (the fleet link's triggers record it then). Answers whether it was open. */
export async function closeOpenBatch(db: Db, orgId: OrgId, batchId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('historian_batches')
    .set({ status: 'complete', completed_at: now, updated_at: now })
    .where('org_id', '=', orgId)
    .where('id', '=', batchId)
    .where('status', '=', 'open')
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Open batches of every organisation (or of `orgs`) opened before `before`: the close job's work (system scope). */
export function listOpenBatchesBefore(
  db: Db,
  before: number,
  orgs?: readonly string[],
): Promise<Array<{ org_id: string; site_code: string; id: string; created_by: string }>> {
  let query = db
    .selectFrom('historian_batches')
    .select(['org_id', 'site_code', 'id', 'created_by'])
    .where('status', '=', 'open')
    .where('created_at', '<', before)
  if (orgs !== undefined) query = query.where('org_id', 'in', orgs.length === 0 ? [''] : orgs)
  return query.execute()
}
