import type { Kysely } from 'kysely'
import { enableTenantRowSecurity, isPostgres } from '../row-level-security.ts'

/**
 * Issue 26, a seed's exact versions (ARCHITECTURE.md § Fleet link): `link_seed_versions` (cloud) holds, per site
 * server and seeded row, the cloud's seq of the version its seed package carried, for the rows whose version lies after
 * the seed's cursor (changed while the seed was taken: the pull would bring that change again). A pull answers such a
 * change (or an older one of the row) as superseded, and a site edit based on the seed is judged from that version,
 * not from the cursor.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db)
  await db.schema
    .createTable('link_seed_versions')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('table_name', 'text', (c) => c.notNull())
    .addColumn('row_key', 'text', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('link_seed_versions_pk', ['org_id', 'server_id', 'table_name', 'row_key'])
    // Every reference deferrable on PostgreSQL, checked at once unless deferred (migration 2350).
    .addForeignKeyConstraint('link_seed_versions_org', ['org_id'], 'orgs', ['id'], (fk) => {
      const cascading = fk.onDelete('cascade')
      return pg ? cascading.deferrable().initiallyImmediate() : cascading
    })
    .execute()
  if (pg) await enableTenantRowSecurity(db, 'link_seed_versions')
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('link_seed_versions').execute()
}
