import type { Kysely } from 'kysely'

/**
 * Session 23: an operator suspends an organisation (`sitegrid org suspend`) and resumes it; while `suspended_at` is
 * set its hosts serve nothing (http/tenancy.ts) and nothing it owns is touched.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('orgs').addColumn('suspended_at', 'bigint').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('orgs').dropColumn('suspended_at').execute()
}
