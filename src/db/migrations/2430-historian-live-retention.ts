import type { Kysely } from 'kysely'
import { enableTenantRowSecurity, isPostgres } from '../row-level-security.ts'

/**
 * Issue 30, live samples and retention.
 *
 * `historian_live_batches`: the batch ids gateways chose (POST …/historian/samples), each with the historian batch its
 * samples went into and the answer it got, so that a resend answers the same without storing anything twice. It goes
 * with its historian batch (deleted by hand, or by its site).
 *
 * `historian_retention`: a site's retention policy (`retention_days`, null keeps every sample) and the progress of
 * the job that applies it (last run, samples it deleted, the oldest sample kept). Goes with its site.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db)
  await db.schema
    .createTable('historian_live_batches')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('batch_key', 'text', (c) => c.notNull())
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addColumn('answer', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('historian_live_batches_pk', ['org_id', 'site_code', 'batch_key'])
    .addForeignKeyConstraint('historian_live_batches_batch', ['org_id', 'batch_id'], 'historian_batches', ['org_id', 'id'], (fk) => {
      const cascading = fk.onDelete('cascade')
      return pg ? cascading.deferrable().initiallyImmediate() : cascading
    })
    .execute()
  // The foreign key's own index: deleting a batch finds its key row without a scan.
  await db.schema.createIndex('historian_live_batches_batch_idx').on('historian_live_batches').columns(['org_id', 'batch_id']).execute()

  await db.schema
    .createTable('historian_retention')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('retention_days', 'integer')
    .addColumn('last_run_at', 'bigint')
    .addColumn('last_deleted', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('oldest_kept_ts', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('historian_retention_pk', ['org_id', 'site_code'])
    .addForeignKeyConstraint('historian_retention_site', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], (fk) => {
      const cascading = fk.onDelete('cascade')
      return pg ? cascading.deferrable().initiallyImmediate() : cascading
    })
    .execute()

  if (pg) for (const table of ['historian_live_batches', 'historian_retention']) await enableTenantRowSecurity(db, table)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('historian_retention').execute()
  await db.schema.dropTable('historian_live_batches').execute()
}
