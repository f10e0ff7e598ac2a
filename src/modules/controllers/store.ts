import type { ControllersTable, Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export type ControllerChanges = Partial<Omit<ControllersTable, 'org_id' | 'site_code' | 'id' | 'asset_number' | 'created_at'>>

/** A new controller's row, for the audited insert (audit/service.ts `insertAudited`). */
export function controllerInsert(row: ControllersTable) {
  return { table: 'controllers' as const, row }
}

export function findController(db: Db, orgId: OrgId, siteCode: string, id: string) {
  return db.selectFrom('controllers').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode).where('id', '=', id).executeTakeFirst()
}

export function findControllerByAssetNumber(db: Db, orgId: OrgId, siteCode: string, assetNumber: string) {
  return db
    .selectFrom('controllers')
    .select('id')
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('asset_number', '=', assetNumber)
    .executeTakeFirst()
}

export function listControllers(db: Db, orgId: OrgId, siteCode: string, options: { limit: number; after?: string; edgeId?: string }) {
  let query = db.selectFrom('controllers').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode)
  if (options.after !== undefined) query = query.where('id', '>', options.after)
  if (options.edgeId !== undefined) query = query.where('edge_id', '=', options.edgeId)
  return query
    .orderBy('id')
    .limit(options.limit + 1)
    .execute()
}

export function listControllerIds(db: Db, orgId: OrgId, siteCode: string, ids: readonly string[]) {
  if (ids.length === 0) return Promise.resolve([])
  return db.selectFrom('controllers').select('id').where('org_id', '=', orgId).where('site_code', '=', siteCode).where('id', 'in', ids).execute()
}

export function listAllControllers(db: Db, orgId: OrgId, siteCode: string) {
  return db.selectFrom('controllers').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode).orderBy('id').execute()
}

export function updateController(db: Db, orgId: OrgId, siteCode: string, id: string, changes: ControllerChanges) {
  return db.updateTable('controllers').set(changes).where('org_id', '=', orgId).where('site_code', '=', siteCode).where('id', '=', id).executeTakeFirst()
}

export function deleteController(db: Db, orgId: OrgId, siteCode: string, id: string) {
  return db.deleteFrom('controllers').where('org_id', '=', orgId).where('site_code', '=', siteCode).where('id', '=', id).executeTakeFirst()
}

export async function countControllers(db: Db, orgId: OrgId, siteCode: string): Promise<number> {
  const row = await db
    .selectFrom('controllers')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
