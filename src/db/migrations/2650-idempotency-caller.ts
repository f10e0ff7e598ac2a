import type { Kysely } from 'kysely'

/**
 * Session 26: an Idempotency-Key's stored answer is replayed to the caller that made it only (its API key, signed-in
 * account, site user or site server: `kind:subject`, http/idempotency.ts). Before, any credential of the organisation
 * that passed the route's policy and sent the same key, path and body got the first answer as its own, while the
 * audit trail (and an AI completion's usage) named the first caller. Rows stored before have no caller (null) and keep
 * the old scope until they expire, 24 hours after their request.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('caller', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('caller').execute()
}
