import type { Kysely } from 'kysely'

/**
 * Issue 9, import speed: historian_points keeps one index, its primary key (org_id, series_id, ts). The
 * (org_id, batch_id) index cost every inserted sample a second b-tree insert (most of the import's server time on
 * PostgreSQL, see docs/benchmarks.md); a batch's samples are found instead through the primary key, per series
 * over the time range the batch recorded for it (historian_batches.tags, kept current while it runs), filtered by
 * batch_id (store.ts batchRanges). Rows are unchanged: nothing to carry over, and row-level security is untouched.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('historian_points_batch_idx').ifExists().execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('historian_points_batch_idx').on('historian_points').columns(['org_id', 'batch_id']).execute()
}
