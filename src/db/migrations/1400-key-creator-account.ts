import type { Kysely } from 'kysely'

// A key minted by a signed-in user records the user's membership key (OIDC `oid`) beside the pairwise `sub`
// shown as createdByUserId, so that the expiry reminder can find the creator's e-mail (issue 12).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('created_by_account', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('created_by_account').execute()
}
