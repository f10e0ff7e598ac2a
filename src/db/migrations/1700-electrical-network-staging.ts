import type { Kysely } from 'kysely'
import { enableTenantRowSecurity, isPostgres } from '../row-level-security.ts'

// Staging of the streamed bulk load (PUT …/electrical/network, issue 7): each load's nodes and edges are written
// here in short chunks as the body arrives, checked as a whole in SQL, then copied into electrical_nodes/edges in
// one transaction and deleted. `kind` 0 is a node (node columns set), 1 an edge (source/target/type set);
// `position` is the element's index in its array (the JSON pointer of a problem). Rows of a load that never
// finished (a crash) are removed at start-up or by the age sweep on `staged_at`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('electrical_network_staging')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('load_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'integer', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('staged_at', 'bigint', (c) => c.notNull())
    .addColumn('node_id', 'text')
    .addColumn('name', 'text')
    .addColumn('node_type', 'integer')
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
    .addColumn('tag_bindings', 'text')
    .addColumn('metadata', 'text')
    .addColumn('created_at', 'bigint')
    .addColumn('source_id', 'text')
    .addColumn('target_id', 'text')
    .addColumn('edge_type', 'integer')
    .addPrimaryKeyConstraint('electrical_network_staging_pk', ['org_id', 'load_id', 'kind', 'position'])
    .execute()
  // Duplicate ids and edge ends are looked up by node id; repeated triples by (source, target, type).
  await db.schema
    .createIndex('electrical_network_staging_node')
    .on('electrical_network_staging')
    .columns(['org_id', 'load_id', 'kind', 'node_id', 'position'])
    .execute()
  await db.schema
    .createIndex('electrical_network_staging_triple')
    .on('electrical_network_staging')
    .columns(['org_id', 'load_id', 'kind', 'source_id', 'target_id', 'edge_type', 'position'])
    .execute()
  await db.schema.createIndex('electrical_network_staging_age').on('electrical_network_staging').columns(['org_id', 'staged_at']).execute()
  // A tenant table added after 1200-row-level-security: it turns row-level security on itself.
  if (isPostgres(db)) await enableTenantRowSecurity(db, 'electrical_network_staging')
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('electrical_network_staging').execute()
}
