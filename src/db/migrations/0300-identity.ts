import type { Kysely } from 'kysely'

// Identity (issue 4): organisation memberships keyed by the OIDC `oid`, the platform-admin list, browser
// sessions and the pending sign-ins between /auth/login and /auth/callback. Sessions live here, not in
// memory, so N processes behind a load balancer share them.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('memberships')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('role', 'text')
    .addColumn('email', 'text')
    .addColumn('name', 'text')
    .addColumn('requested_at', 'bigint', (c) => c.notNull())
    .addColumn('decided_at', 'bigint')
    .addColumn('decided_by', 'text')
    .addPrimaryKeyConstraint('memberships_pk', ['org_id', 'account_id'])
    .execute()
  await db.schema.createIndex('memberships_org_status').on('memberships').columns(['org_id', 'status', 'role']).execute()

  await db.schema
    .createTable('platform_admins')
    .addColumn('account_id', 'text', (c) => c.primaryKey())
    .addColumn('note', 'text')
    .addColumn('added_at', 'bigint', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('sessions')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('sub', 'text', (c) => c.notNull())
    .addColumn('access_token', 'text', (c) => c.notNull())
    .addColumn('access_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('refresh_token', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('sessions_pk', ['org_id', 'id'])
    .execute()
  await db.schema.createIndex('sessions_org_account').on('sessions').columns(['org_id', 'account_id']).execute()

  await db.schema
    .createTable('pending_logins')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('verifier', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('return_to', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('pending_logins_pk', ['org_id', 'id'])
    .execute()
  await db.schema.createIndex('pending_logins_org_expires').on('pending_logins').columns(['org_id', 'expires_at']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('pending_logins').execute()
  await db.schema.dropTable('sessions').execute()
  await db.schema.dropTable('platform_admins').execute()
  await db.schema.dropTable('memberships').execute()
}
