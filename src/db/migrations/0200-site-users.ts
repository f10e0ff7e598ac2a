import type { Kysely } from 'kysely'

// Site server (issue 5): site users with PIN hashes, the local JWT signing keys, refresh-token families and
// sign-in failure counters. Every table is tenant-owned: org_id leads the primary key and cascades from orgs.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('site_users')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('site_role', 'text', (c) => c.notNull())
    .addColumn('pin_hash', 'text', (c) => c.notNull())
    .addColumn('token_version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('pin_changed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('site_users_pk', ['org_id', 'id'])
    .addUniqueConstraint('site_users_org_email', ['org_id', 'email'])
    .execute()

  await db.schema
    .createTable('site_signing_keys')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('kid', 'text', (c) => c.notNull())
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('sealed_private_jwk', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('retired_at', 'bigint')
    .addPrimaryKeyConstraint('site_signing_keys_pk', ['org_id', 'kid'])
    .execute()
  await db.schema.createIndex('site_signing_keys_org_created').on('site_signing_keys').columns(['org_id', 'created_at']).execute()

  await db.schema
    .createTable('site_refresh_tokens')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('family_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('family_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addPrimaryKeyConstraint('site_refresh_tokens_pk', ['org_id', 'id'])
    .addForeignKeyConstraint('site_refresh_tokens_user', ['org_id', 'user_id'], 'site_users', ['org_id', 'id'], (fk) => fk.onDelete('cascade'))
    .execute()
  await db.schema.createIndex('site_refresh_tokens_org_family').on('site_refresh_tokens').columns(['org_id', 'family_id']).execute()
  await db.schema.createIndex('site_refresh_tokens_org_user').on('site_refresh_tokens').columns(['org_id', 'user_id']).execute()

  await db.schema
    .createTable('site_sign_in_failures')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('last_failure_at', 'bigint', (c) => c.notNull())
    .addColumn('locked_until', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('site_sign_in_failures_pk', ['org_id', 'subject'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('site_sign_in_failures').execute()
  await db.schema.dropTable('site_refresh_tokens').execute()
  await db.schema.dropTable('site_signing_keys').execute()
  await db.schema.dropTable('site_users').execute()
}
