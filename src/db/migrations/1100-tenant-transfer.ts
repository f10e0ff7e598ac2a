import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // A staged package lives in the database, not on one process's disk: the PUT and the POST that applies it may
  // reach different processes of a cell. Chunks are base64 text so that one DDL serves both dialects.
  await db.schema
    .createTable('tenant_import_packages')
    .addColumn('org_id', 'text', (c) => c.primaryKey().references('orgs.id').onDelete('cascade'))
    .addColumn('staged_at', 'bigint', (c) => c.notNull())
    .addColumn('staged_by', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('is_valid', 'integer', (c) => c.notNull())
    .addColumn('summary', 'text')
    .execute()
  await db.schema
    .createTable('tenant_import_chunks')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('tenant_import_chunks_pk', ['org_id', 'seq'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('tenant_import_chunks').execute()
  await db.schema.dropTable('tenant_import_packages').execute()
}
