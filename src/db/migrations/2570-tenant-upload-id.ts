import { type Kysely, sql } from 'kysely'

/**
 * Two uploads of one organisation's package at once (session 22): each upload has its id, and its chunks, its check
 * and its drop are written only while the staged row still carries that id, so a later upload replaces an earlier one
 * whole and an import's drop never takes an upload begun after it (tenant-transfer/store.ts). A staged package is
 * transient (between a PUT and the POST that applies it): one staged before the upgrade is dropped, as in 2100.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`delete from tenant_import_chunks`.execute(db)
  await sql`delete from tenant_import_packages`.execute(db)
  // SQLite adds a NOT NULL column only with a default; every staging writes its own id.
  await db.schema
    .alterTable('tenant_import_packages')
    .addColumn('upload_id', 'text', (c) => c.notNull().defaultTo(''))
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tenant_import_packages').dropColumn('upload_id').execute()
}
