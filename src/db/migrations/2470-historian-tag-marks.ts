import type { Kysely } from 'kysely'
import { installLinkTriggers } from '../link-triggers.ts'
import { enableTenantRowSecurity, isPostgres } from '../row-level-security.ts'

/**
 * Issue 30, tags marked discrete: `historian_tag_marks` holds a tag's stored interpolation (`step`: a discrete tag,
 * each value held until the next; `linear`), per instance and tag key, read by the historian's interpolating modes
 * when the query names none. Goes with its instance; the fleet link carries it down (the cloud's, editable on a site).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db)
  await db.schema
    .createTable('historian_tag_marks')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('tag_key', 'text', (c) => c.notNull())
    .addColumn('interpolation', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('historian_tag_marks_pk', ['org_id', 'site_code', 'instance_id', 'tag_key'])
    .addForeignKeyConstraint('historian_tag_marks_instance', ['org_id', 'site_code', 'instance_id'], 'instances', ['org_id', 'site_code', 'id'], (fk) => {
      const cascading = fk.onDelete('cascade')
      return pg ? cascading.deferrable().initiallyImmediate() : cascading
    })
    .execute()
  if (pg) await enableTenantRowSecurity(db, 'historian_tag_marks')
  // Carried down by the fleet link like instances (link-triggers.ts LINKED_TABLES).
  await installLinkTriggers(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('historian_tag_marks').execute()
}
