import type { Kysely } from 'kysely'

/**
 * Session 24 (issue 29): the key list reads `org_id = ?` newest first with the id as tie-break
 * (`order by created_at desc, id desc`); an index on `(org_id, created_at)` left the tie-break to a temporary B-tree
 * on every list (SQLite's plan: `USE TEMP B-TREE FOR LAST TERM OF ORDER BY`). With the id in the index the read walks
 * it backwards and sorts nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('api_keys_org_created').execute()
  await db.schema.createIndex('api_keys_org_created').on('api_keys').columns(['org_id', 'created_at', 'id']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('api_keys_org_created').execute()
  await db.schema.createIndex('api_keys_org_created').on('api_keys').columns(['org_id', 'created_at']).execute()
}
