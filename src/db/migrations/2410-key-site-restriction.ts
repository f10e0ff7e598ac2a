import type { Kysely } from 'kysely'

/**
 * Issue 30, keys for edge gateways: a key may be restricted to one site (`site_code`) and to client networks
 * (`networks`, CIDR blocks joined by commas). Null: unrestricted, as every key minted before. No foreign key to
 * `sites`: `api_keys` is a reference table on Citus (db/distribution.ts), which cannot reference a distributed table;
 * a key restricted to a site deleted since reaches nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('site_code', 'text').execute()
  await db.schema.alterTable('api_keys').addColumn('networks', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('networks').execute()
  await db.schema.alterTable('api_keys').dropColumn('site_code').execute()
}
