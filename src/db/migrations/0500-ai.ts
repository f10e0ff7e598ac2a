import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per AI completion request, written before the provider is called (status `pending`) so that the
  // per-minute limit counts requests still in flight; finished with the token usage. Prompts and completions
  // are never stored.
  await db.schema
    .createTable('ai_usage')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('tier', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('is_stream', 'integer', (c) => c.notNull())
    .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
    .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
    .addColumn('total_tokens', 'bigint', (c) => c.notNull())
    .addColumn('is_estimated', 'integer', (c) => c.notNull())
    .addColumn('redactions', 'integer', (c) => c.notNull())
    .addColumn('site_code', 'text')
    .addColumn('error_code', 'text')
    .addColumn('finished_at', 'bigint')
    .addPrimaryKeyConstraint('ai_usage_pk', ['org_id', 'id'])
    .execute()
  await db.schema.createIndex('ai_usage_org_tier_at').on('ai_usage').columns(['org_id', 'tier', 'at']).execute()
  await db.schema.createIndex('ai_usage_org_day').on('ai_usage').columns(['org_id', 'day', 'tier']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('ai_usage').execute()
}
