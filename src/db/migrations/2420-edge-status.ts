import type { ForeignKeyConstraintBuilder, Kysely } from 'kysely'
import { enableTenantRowSecurity, isPostgres } from '../row-level-security.ts'

/**
 * Issue 30, edge gateway status. The latest heartbeat of each gateway (`edge_gateways`) and the latest report of each
 * controller (`edge_controller_status`, one row a controller: the gateway that polls it now reported it last), never a
 * log: a heartbeat overwrites them. `is_alarmed` says whether a communication alarm was raised for the controller and
 * not yet cleared (modules/edges/status.ts). Neither is linked nor moved by a tenant package: they describe what this
 * server heard. No foreign key to `controllers`: a row of a controller deleted or moved since is dropped by the
 * stale sweep, and reads show only the controllers assigned to the gateway.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db)
  const cascadeWithSite = (fk: ForeignKeyConstraintBuilder) => {
    const cascading = fk.onDelete('cascade')
    return pg ? cascading.deferrable().initiallyImmediate() : cascading
  }
  await db.schema
    .createTable('edge_gateways')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('edge_id', 'text', (c) => c.notNull())
    .addColumn('gateway_version', 'text', (c) => c.notNull())
    .addColumn('is_faulted', 'integer', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('edge_gateways_pk', ['org_id', 'site_code', 'edge_id'])
    .addForeignKeyConstraint('edge_gateways_site', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], cascadeWithSite)
    .execute()
  await db.schema
    .createTable('edge_controller_status')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('controller_id', 'text', (c) => c.notNull())
    .addColumn('edge_id', 'text', (c) => c.notNull())
    .addColumn('communication', 'text', (c) => c.notNull())
    .addColumn('last_good_poll_at', 'bigint')
    .addColumn('error_count', 'bigint', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('reported_at', 'bigint', (c) => c.notNull())
    .addColumn('is_alarmed', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('edge_controller_status_pk', ['org_id', 'site_code', 'controller_id'])
    .addForeignKeyConstraint('edge_controller_status_site', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], cascadeWithSite)
    .execute()
  // The stale sweep's search: reports not yet alarmed, oldest first.
  await db.schema.createIndex('edge_controller_status_unalarmed').on('edge_controller_status').columns(['org_id', 'is_alarmed', 'reported_at']).execute()
  if (pg) {
    await enableTenantRowSecurity(db, 'edge_gateways')
    await enableTenantRowSecurity(db, 'edge_controller_status')
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('edge_controller_status').execute()
  await db.schema.dropTable('edge_gateways').execute()
}
