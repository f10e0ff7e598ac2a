import type { Kysely } from 'kysely'

/**
 * Issue 26, the fleet link's historian chunks (ARCHITECTURE.md § Fleet link): the cloud keeps each chunk's SHA-256,
 * so a resumed upload can tell whether the chunks the cloud holds are still the batch's samples at those positions
 * (a forced import on the site may have taken some of them over since) before it skips them. Null for a chunk stored
 * before this migration: the uploader treats it as changed and uploads the batch again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('link_chunks').addColumn('sha256', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('link_chunks').dropColumn('sha256').execute()
}
