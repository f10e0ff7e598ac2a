import { sql, type Kysely } from 'kysely'
import { isPostgres } from '../row-level-security.ts'

/**
 * Issue 25, Citus readiness (docs/citus.md): on Citus a unique constraint of a table distributed by `org_id` must
 * include `org_id`, and a lookup must name the tenant to reach one shard. The site refresh token hash was unique
 * across organisations; it is now unique within its organisation, and looked up with it (the Host header names the
 * organisation before any credential is checked). It is a hash of a random secret: no two rows ever shared one, so
 * nothing a request sees changes. (The API-key verifier stays unique across organisations: a plaintext key belongs
 * to one organisation, and a moved key's placeholder cannot be taken twice; `api_keys` is a reference table.)
 * SQLite (one box, never distributed) keeps the old column constraint beside the new index: a column's UNIQUE
 * cannot be dropped there without making the table anew, and the stricter rule it keeps never refuses a real row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('site_refresh_tokens_org_token').unique().on('site_refresh_tokens').columns(['org_id', 'token_hash']).execute()
  if (!isPostgres(db)) return
  await sql`alter table site_refresh_tokens drop constraint site_refresh_tokens_token_hash_key`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table site_refresh_tokens add constraint site_refresh_tokens_token_hash_key unique (token_hash)`.execute(db)
  }
  await db.schema.dropIndex('site_refresh_tokens_org_token').execute()
}
