import { sql, type Kysely } from 'kysely'
import { isPostgres } from '../row-level-security.ts'

/**
 * Issue 24, memory: a staged package's chunks are bytes (bytea, blob), not base64 text. Each 1 MiB chunk was a
 * 1.4 MiB string on the way in and on the way back, a large object V8 frees only at a full collection: a 100 MiB
 * upload grew the server by +80 MiB. A staged package is transient (it lives between a PUT and the POST that applies
 * it), so one staged before the upgrade is dropped and must be staged again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`delete from tenant_import_chunks`.execute(db)
  await sql`delete from tenant_import_packages`.execute(db)
  if (isPostgres(db)) {
    await sql`alter table tenant_import_chunks alter column data type bytea using decode(data, 'base64')`.execute(db)
    return
  }
  // SQLite cannot change a column's type: the table is made anew (it is empty).
  await db.schema.dropTable('tenant_import_chunks').execute()
  await createChunks(db, 'blob')
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from tenant_import_chunks`.execute(db)
  await sql`delete from tenant_import_packages`.execute(db)
  if (isPostgres(db)) {
    await sql`alter table tenant_import_chunks alter column data type text using encode(data, 'base64')`.execute(db)
    return
  }
  await db.schema.dropTable('tenant_import_chunks').execute()
  await createChunks(db, 'text')
}

async function createChunks(db: Kysely<unknown>, type: 'blob' | 'text'): Promise<void> {
  await db.schema
    .createTable('tenant_import_chunks')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', type, (c) => c.notNull())
    .addPrimaryKeyConstraint('tenant_import_chunks_pk', ['org_id', 'seq'])
    .execute()
}
