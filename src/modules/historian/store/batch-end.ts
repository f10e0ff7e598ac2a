import type { DatabaseHandle } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'
import { countStoredOfBatch, deleteBatchRow, deleteSamplesOfBatch, findBatch, updateBatch, type BatchCoverage, type BatchWhere } from './queries.ts'
import { whenAbandoned } from './session.ts'

/** A refused import leaves no trace: its samples and its row go. */
export async function removeBatch(trx: Db, orgId: OrgId, batchId: string, where: BatchWhere): Promise<void> {
  await deleteSamplesOfBatch(trx, orgId, batchId, where)
  await deleteBatchRow(trx, orgId, batchId)
}

/**
 * Marks a batch `failed` once its samples are removed. Its `samples_stored` is then counted from what the database
 * holds of it (0), not left at the running total of its writes: a failed batch keeps nothing and says so.
 */
export async function failBatch(trx: Db, orgId: OrgId, batchId: string, where: BatchWhere, changes: { error: string; updated_at: number }): Promise<void> {
  await deleteSamplesOfBatch(trx, orgId, batchId, where)
  const left = await countStoredOfBatch(trx, orgId, batchId, where)
  await updateBatch(trx, orgId, batchId, { status: 'failed', samples_stored: left, ...changes })
}

/**
 * Fails a running batch whose import is gone (session.ts whenAbandoned): samples removed, marked failed with
 * `error`. Read again under the import's lock, so an import that completed or failed in the meantime is left as it
 * is. Answers whether it cleaned the batch.
 */
export async function failIfAbandoned(handle: DatabaseHandle, orgId: OrgId, batchId: string, failure: { error: string; now: () => number }): Promise<boolean> {
  let isCleaned = false
  await whenAbandoned(handle, batchId, async (conn) => {
    await conn.transaction().execute(async (trx) => {
      const row = await findBatch(trx, orgId, batchId)
      if (row?.status !== 'running') return
      await failBatch(
        trx,
        orgId,
        batchId,
        { siteCode: row.site_code, coverage: JSON.parse(row.tags) as BatchCoverage[] },
        {
          error: failure.error,
          updated_at: failure.now(),
        },
      )
      isCleaned = true
    })
  })
  return isCleaned
}
