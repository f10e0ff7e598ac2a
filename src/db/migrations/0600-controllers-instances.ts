import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // (org_id, site_code) → sites cascades: deleting a site removes its controllers and instances in the same statement.
  await db.schema
    .createTable('controllers')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('platform', 'integer', (c) => c.notNull())
    .addColumn('firmware_version', 'text')
    .addColumn('asset_number', 'text', (c) => c.notNull())
    .addColumn('protocol', 'text', (c) => c.notNull())
    .addColumn('ip_address', 'text', (c) => c.notNull())
    .addColumn('port', 'integer')
    .addColumn('cip_path', 'text')
    .addColumn('poll_interval_ms', 'integer', (c) => c.notNull())
    .addColumn('timeout_ms', 'integer', (c) => c.notNull())
    .addColumn('retry_delay_ms', 'integer', (c) => c.notNull())
    .addColumn('max_retries', 'integer', (c) => c.notNull())
    .addColumn('edge_id', 'text')
    .addColumn('edge_plc_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('controllers_pk', ['org_id', 'site_code', 'id'])
    .addForeignKeyConstraint('controllers_site_fk', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], (c) => c.onDelete('cascade'))
    .execute()
  // The unique index is what stops two concurrent creates from sharing an asset number (spec: unique per site).
  await db.schema.createIndex('controllers_asset_number_uq').on('controllers').columns(['org_id', 'site_code', 'asset_number']).unique().execute()
  await db.schema.createIndex('controllers_edge_idx').on('controllers').columns(['org_id', 'site_code', 'edge_id', 'id']).execute()

  await db.schema
    .createTable('instances')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type_id', 'text', (c) => c.notNull())
    .addColumn('type_version', 'text')
    .addColumn('asset_number', 'text', (c) => c.notNull())
    .addColumn('controller_id', 'text', (c) => c.notNull())
    .addColumn('area', 'text')
    .addColumn('tag_mappings', 'text', (c) => c.notNull())
    .addColumn('tag_count', 'integer', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('instances_pk', ['org_id', 'site_code', 'id'])
    .addForeignKeyConstraint('instances_site_fk', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], (c) => c.onDelete('cascade'))
    // NO ACTION (checked at the end of the statement): a controller in use cannot be deleted, yet a site delete
    // that cascades to both tables in one statement succeeds on both dialects.
    .addForeignKeyConstraint('instances_controller_fk', ['org_id', 'site_code', 'controller_id'], 'controllers', ['org_id', 'site_code', 'id'])
    .execute()
  await db.schema.createIndex('instances_controller_idx').on('instances').columns(['org_id', 'site_code', 'controller_id', 'id']).execute()
  await db.schema.createIndex('instances_area_idx').on('instances').columns(['org_id', 'site_code', 'area', 'id']).execute()
  await db.schema.createIndex('instances_type_idx').on('instances').columns(['org_id', 'site_code', 'type_id', 'id']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('instances').execute()
  await db.schema.dropTable('controllers').execute()
}
