import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('domain_bindings')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('is_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('domain_bindings_pk', ['org_id', 'domain'])
    .execute()
  // A domain serves at most one organisation: the only index not led by org_id, because the Host header
  // is all tenancy knows before it finds the organisation (and the database, not a read-then-write, decides a race).
  await db.schema.createIndex('domain_bindings_domain').unique().on('domain_bindings').column('domain').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('domain_bindings').execute()
}
