import type { Kysely } from 'kysely'

// Audit records of the platform itself (issue 4): changes that belong to no organisation, such as the list of
// platform admins. Tenant audit rows stay per organisation (`audit_log`); these have no `org_id`, so no
// organisation's owner reads them and a tenant export never carries them. Read with `sitegrid platform-admin audit`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('platform_audit')
    .addColumn('id', 'text', (c) => c.notNull().primaryKey())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('platform_audit_at').on('platform_audit').columns(['at', 'id']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('platform_audit').execute()
}
