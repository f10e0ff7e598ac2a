import type { Kysely } from 'kysely'
import { enableTenantRowSecurity, isPostgres } from '../row-level-security.ts'

/**
 * Issue 26, a historian batch the cloud shows, uploaded again (ARCHITECTURE.md § Fleet link): its samples are replaced
 * chunk by chunk instead of removed first, so the cloud never shows fewer of them than either version has while the
 * resend runs.
 * - `link_chunks.last_key`: the key of a chunk's last sample, `[instanceId, tagKey, ts]` as JSON; a replacing chunk
 *   removes the batch's samples between the previous chunk's last key and its own.
 * - `link_chunk_spans` (cloud): while a server's upload replaces a batch the cloud shows, the series and time spans the
 *   cloud may hold samples of that batch in (the shown version's coverage and every replacing chunk's), so no
 *   removal scans a series beyond them. Present only while replacing: the batch row's arrival removes what lies past
 *   the last chunk and drops them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db)
  await db.schema.alterTable('link_chunks').addColumn('last_key', 'text').execute()
  await db.schema
    .createTable('link_chunk_spans')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addColumn('series_id', 'bigint', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('tag_key', 'text', (c) => c.notNull())
    .addColumn('from_ts', 'bigint', (c) => c.notNull())
    .addColumn('to_ts', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('link_chunk_spans_pk', ['org_id', 'server_id', 'batch_id', 'series_id'])
    // Every reference deferrable on PostgreSQL, checked at once unless deferred (migration 2350).
    .addForeignKeyConstraint('link_chunk_spans_org', ['org_id'], 'orgs', ['id'], (fk) => {
      const cascading = fk.onDelete('cascade')
      return pg ? cascading.deferrable().initiallyImmediate() : cascading
    })
    .execute()
  if (pg) await enableTenantRowSecurity(db, 'link_chunk_spans')
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('link_chunk_spans').execute()
  await db.schema.alterTable('link_chunks').dropColumn('last_key').execute()
}
