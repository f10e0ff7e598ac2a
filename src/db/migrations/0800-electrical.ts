import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // (org_id, site_code) → sites cascades: deleting a site removes its whole network in the same statement.
  await db.schema
    .createTable('electrical_nodes')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('node_type', 'integer', (c) => c.notNull())
    .addColumn('rated_voltage_v', 'double precision')
    .addColumn('rated_current_a', 'double precision')
    .addColumn('rated_power_kw', 'double precision')
    .addColumn('impedance_ohms', 'double precision')
    .addColumn('cable_size', 'text')
    .addColumn('cable_length_m', 'double precision')
    .addColumn('protection_curve', 'text')
    .addColumn('protection_pickup_a', 'double precision')
    .addColumn('protection_tms', 'double precision')
    .addColumn('description', 'text')
    .addColumn('tag_bindings', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('electrical_nodes_pk', ['org_id', 'site_code', 'id'])
    .addForeignKeyConstraint('electrical_nodes_site_fk', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], (c) => c.onDelete('cascade'))
    .execute()

  // The primary key is the spec's edge identity (source, target, type). Both ends reference a node of the same
  // site with NO ACTION (checked at the end of the statement): a node with edges cannot be deleted on its own,
  // yet a site delete cascading to both tables in one statement succeeds on both dialects.
  await db.schema
    .createTable('electrical_edges')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('edge_type', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('electrical_edges_pk', ['org_id', 'site_code', 'source_id', 'target_id', 'edge_type'])
    .addForeignKeyConstraint('electrical_edges_site_fk', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], (c) => c.onDelete('cascade'))
    .addForeignKeyConstraint('electrical_edges_source_fk', ['org_id', 'site_code', 'source_id'], 'electrical_nodes', ['org_id', 'site_code', 'id'])
    .addForeignKeyConstraint('electrical_edges_target_fk', ['org_id', 'site_code', 'target_id'], 'electrical_nodes', ['org_id', 'site_code', 'id'])
    .execute()
  // Edges by target: "which edges touch this node" and the FK check on a node delete use both indexes.
  await db.schema.createIndex('electrical_edges_target_idx').on('electrical_edges').columns(['org_id', 'site_code', 'target_id']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('electrical_edges').execute()
  await db.schema.dropTable('electrical_nodes').execute()
}
