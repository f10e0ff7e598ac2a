import type { Insertable, Selectable } from 'kysely'
import type { Db, EdgeControllerStatusTable, EdgeGatewaysTable } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'
import { reusableQuery } from '../../db/reusable-query.ts'

// Read on every gateway poll (the 304 path): compiled once per database (db/reusable-query.ts).
const versionOf = reusableQuery((db: Db, orgId: string, siteCode: string) =>
  db.selectFrom('edge_config_versions').select('version').where('org_id', '=', orgId).where('site_code', '=', siteCode),
)

/** The site's configuration version (migration 2410's triggers keep it); undefined when its equipment never changed. */
export async function findConfigVersion(db: Db, orgId: OrgId, siteCode: string): Promise<number | undefined> {
  const [row] = await versionOf(db, orgId, siteCode)
  return row === undefined ? undefined : Number(row.version)
}

export type GatewayRow = Selectable<EdgeGatewaysTable>
export type ControllerStatusRow = Selectable<EdgeControllerStatusTable>

export function findGateways(db: Db, orgId: OrgId, siteCode: string, edgeId?: string): Promise<GatewayRow[]> {
  let q = db.selectFrom('edge_gateways').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode)
  if (edgeId !== undefined) q = q.where('edge_id', '=', edgeId)
  return q.execute()
}

/** The latest reports of these controllers (all of the site's when `ids` is absent). */
export function findControllerStatus(db: Db, orgId: OrgId, siteCode: string, ids?: readonly string[]): Promise<ControllerStatusRow[]> {
  if (ids?.length === 0) return Promise.resolve([])
  let q = db.selectFrom('edge_controller_status').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode)
  if (ids !== undefined) q = q.where('controller_id', 'in', ids)
  return q.execute()
}

/** Reports not alarmed and made at or before `at`, of one site or of every site of the organisation (the stale sweep). */
export function findUnalarmedUntil(db: Db, orgId: OrgId, at: number, siteCode?: string): Promise<ControllerStatusRow[]> {
  let q = db.selectFrom('edge_controller_status').selectAll().where('org_id', '=', orgId).where('is_alarmed', '=', 0).where('reported_at', '<=', at)
  if (siteCode !== undefined) q = q.where('site_code', '=', siteCode)
  return q.orderBy('reported_at').execute()
}

export async function upsertGateway(db: Db, row: Insertable<EdgeGatewaysTable>): Promise<void> {
  const { org_id: _o, site_code: _s, edge_id: _e, ...changes } = row
  await db
    .insertInto('edge_gateways')
    .values(row)
    .onConflict((oc) => oc.columns(['org_id', 'site_code', 'edge_id']).doUpdateSet(changes))
    .execute()
}

export async function upsertControllerStatus(db: Db, rows: Array<Insertable<EdgeControllerStatusTable>>): Promise<void> {
  if (rows.length === 0) return
  await db
    .insertInto('edge_controller_status')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['org_id', 'site_code', 'controller_id']).doUpdateSet((eb) => ({
        edge_id: eb.ref('excluded.edge_id'),
        communication: eb.ref('excluded.communication'),
        last_good_poll_at: eb.ref('excluded.last_good_poll_at'),
        error_count: eb.ref('excluded.error_count'),
        last_error: eb.ref('excluded.last_error'),
        reported_at: eb.ref('excluded.reported_at'),
        is_alarmed: eb.ref('excluded.is_alarmed'),
      })),
    )
    .execute()
}

/** Marks a report alarmed if it is still the one the sweep read (no heartbeat since); true when it was. */
export async function markAlarmedIfUnchanged(db: Db, orgId: OrgId, row: ControllerStatusRow): Promise<boolean> {
  const result = await db
    .updateTable('edge_controller_status')
    .set({ is_alarmed: 1 })
    .where('org_id', '=', orgId)
    .where('site_code', '=', row.site_code)
    .where('controller_id', '=', row.controller_id)
    .where('reported_at', '=', row.reported_at)
    .where('is_alarmed', '=', 0)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export async function deleteControllerStatus(db: Db, orgId: OrgId, siteCode: string, controllerId: string): Promise<void> {
  await db
    .deleteFrom('edge_controller_status')
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('controller_id', '=', controllerId)
    .execute()
}

/** Alarmed reports, of one site or of every site of the organisation (the sweep looks for their controllers gone). */
export function findAlarmed(db: Db, orgId: OrgId, siteCode?: string): Promise<ControllerStatusRow[]> {
  let q = db.selectFrom('edge_controller_status').selectAll().where('org_id', '=', orgId).where('is_alarmed', '=', 1)
  if (siteCode !== undefined) q = q.where('site_code', '=', siteCode)
  return q.orderBy('controller_id').execute()
}

/** Deletes a report if it is still the one the sweep read (no heartbeat since); true when it was. */
export async function deleteControllerStatusIfUnchanged(db: Db, orgId: OrgId, row: ControllerStatusRow): Promise<boolean> {
  const result = await db
    .deleteFrom('edge_controller_status')
    .where('org_id', '=', orgId)
    .where('site_code', '=', row.site_code)
    .where('controller_id', '=', row.controller_id)
    .where('edge_id', '=', row.edge_id)
    .where('reported_at', '=', row.reported_at)
    .executeTakeFirst()
  return Number(result.numDeletedRows) === 1
}

/**
 * The organisations the sweep visits (its first, cross-tenant, step): those with a report not alarmed and made at or
 * before `at`, and those with an alarmed report (its controller may have gone since).
 */
export async function findOrgsToSweep(db: Db, at: number): Promise<OrgId[]> {
  const rows = await db
    .selectFrom('edge_controller_status')
    .select('org_id')
    .distinct()
    .where((eb) => eb.or([eb.and([eb('is_alarmed', '=', 0), eb('reported_at', '<=', at)]), eb('is_alarmed', '=', 1)]))
    .execute()
  return rows.map((r) => r.org_id as OrgId)
}
