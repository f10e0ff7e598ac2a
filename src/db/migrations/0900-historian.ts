import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per import. (org_id, site_code) → sites cascades, so deleting a site removes its batches and samples.
  await db.schema
    .createTable('historian_batches')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('rows_read', 'bigint', (c) => c.notNull())
    .addColumn('samples_stored', 'bigint', (c) => c.notNull())
    .addColumn('rejected_count', 'bigint', (c) => c.notNull())
    .addColumn('collision_count', 'bigint', (c) => c.notNull())
    .addColumn('replaced_count', 'bigint', (c) => c.notNull())
    .addColumn('bytes_read', 'bigint', (c) => c.notNull())
    .addColumn('bytes_total', 'bigint')
    .addColumn('first_ts', 'bigint')
    .addColumn('last_ts', 'bigint')
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('report', 'text', (c) => c.notNull())
    .addColumn('options', 'text', (c) => c.notNull())
    .addColumn('trend_sha256', 'text', (c) => c.notNull())
    .addColumn('mapping_sha256', 'text', (c) => c.notNull())
    .addColumn('trend_name', 'text')
    .addColumn('is_forced', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .addPrimaryKeyConstraint('historian_batches_pk', ['org_id', 'id'])
    .addForeignKeyConstraint('historian_batches_site_fk', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], (c) => c.onDelete('cascade'))
    .execute()
  await db.schema.createIndex('historian_batches_site_idx').on('historian_batches').columns(['org_id', 'site_code', 'id']).execute()
  await db.schema.createIndex('historian_batches_hash_idx').on('historian_batches').columns(['org_id', 'site_code', 'trend_sha256', 'mapping_sha256']).execute()
  await db.schema.createIndex('historian_batches_status_idx').on('historian_batches').columns(['status', 'org_id']).execute()

  // The primary key makes "latest value wins" an upsert. A sample is visible only while its batch is complete
  // (reads join historian_batches), so a running or failed batch never shows.
  await db.schema
    .createTable('historian_samples')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('tag_key', 'text', (c) => c.notNull())
    .addColumn('ts', 'bigint', (c) => c.notNull())
    .addColumn('value', 'double precision')
    .addColumn('text', 'text')
    .addColumn('quality', 'smallint', (c) => c.notNull())
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('historian_samples_pk', ['org_id', 'site_code', 'instance_id', 'tag_key', 'ts'])
    .addForeignKeyConstraint('historian_samples_site_fk', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], (c) => c.onDelete('cascade'))
    .execute()
  await db.schema.createIndex('historian_samples_batch_idx').on('historian_samples').columns(['org_id', 'batch_id']).execute()

  // force=true: the batch's samples wait here (deduplicated, the file's last row wins) and replace stored values
  // in the transaction that completes the batch, so a failed forced import never destroys the earlier values.
  await db.schema
    .createTable('historian_staging')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('tag_key', 'text', (c) => c.notNull())
    .addColumn('ts', 'bigint', (c) => c.notNull())
    .addColumn('value', 'double precision')
    .addColumn('text', 'text')
    .addColumn('quality', 'smallint', (c) => c.notNull())
    .addPrimaryKeyConstraint('historian_staging_pk', ['org_id', 'batch_id', 'instance_id', 'tag_key', 'ts'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('historian_staging').execute()
  await db.schema.dropTable('historian_samples').execute()
  await db.schema.dropTable('historian_batches').execute()
}
