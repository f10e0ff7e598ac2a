import { sql, type Kysely } from 'kysely'
import { isPostgres } from '../row-level-security.ts'

/**
 * Issue 25, Citus readiness (docs/citus.md): on Citus a unique constraint of a table distributed by `org_id` must
 * include `org_id`, and a lookup must name the tenant to reach one shard. The API-key verifier and the site refresh
 * token hash were unique across organisations; they are now unique within their organisation, and looked up with it
 * (the Host header names the organisation before any credential is checked). Both are keyed hashes of random
 * secrets: no two rows ever shared one, so nothing a request sees changes.
 * SQLite (one box, never distributed) keeps the old column constraints beside the new indexes: a column's UNIQUE
 * cannot be dropped there without making the table anew, and the stricter rule it keeps never refuses a real row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('api_keys_org_verifier').unique().on('api_keys').columns(['org_id', 'verifier']).execute()
  await db.schema.createIndex('site_refresh_tokens_org_token').unique().on('site_refresh_tokens').columns(['org_id', 'token_hash']).execute()
  if (!isPostgres(db)) return
  await sql`alter table api_keys drop constraint api_keys_verifier_key`.execute(db)
  await sql`alter table site_refresh_tokens drop constraint site_refresh_tokens_token_hash_key`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table site_refresh_tokens add constraint site_refresh_tokens_token_hash_key unique (token_hash)`.execute(db)
    await sql`alter table api_keys add constraint api_keys_verifier_key unique (verifier)`.execute(db)
  }
  await db.schema.dropIndex('site_refresh_tokens_org_token').execute()
  await db.schema.dropIndex('api_keys_org_verifier').execute()
}
