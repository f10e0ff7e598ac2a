import { inMultiRowStatements } from '../../db/multi-row.ts'
import type { Db, InstancesTable } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export type InstanceChanges = Partial<Omit<InstancesTable, 'org_id' | 'site_code' | 'id' | 'created_at'>>

const CHUNK = 500

export function insertInstance(db: Db, row: InstancesTable) {
  return db.insertInto('instances').values(row).execute()
}

/** Inserts many rows in a few multi-row statements (the bulk's one round trip a statement, not one a row). */
export function insertInstances(db: Db, rows: InstancesTable[]) {
  return inMultiRowStatements(rows, Object.keys(rows[0] ?? {}).length, (chunk) => db.insertInto('instances').values(chunk).execute())
}

export function findInstance(db: Db, orgId: OrgId, siteCode: string, id: string) {
  return db.selectFrom('instances').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode).where('id', '=', id).executeTakeFirst()
}

export async function findInstances(db: Db, orgId: OrgId, siteCode: string, ids: readonly string[]): Promise<InstancesTable[]> {
  const out: InstancesTable[] = []
  for (let i = 0; i < ids.length; i += CHUNK) {
    out.push(
      ...(await db
        .selectFrom('instances')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('site_code', '=', siteCode)
        .where('id', 'in', ids.slice(i, i + CHUNK))
        .execute()),
    )
  }
  return out
}

export function listInstances(
  db: Db,
  orgId: OrgId,
  siteCode: string,
  options: { limit: number; after?: string; controllerId?: string; area?: string; typeId?: string },
) {
  let query = db.selectFrom('instances').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode)
  if (options.after !== undefined) query = query.where('id', '>', options.after)
  if (options.controllerId !== undefined) query = query.where('controller_id', '=', options.controllerId)
  if (options.area !== undefined) query = query.where('area', '=', options.area)
  if (options.typeId !== undefined) query = query.where('type_id', '=', options.typeId)
  return query
    .orderBy('id')
    .limit(options.limit + 1)
    .execute()
}

/** The tag mappings of the site's instances, or of those of `controllerIds` (by controller, each ordered by id). */
export async function listTagMappingRows(db: Db, orgId: OrgId, siteCode: string, controllerIds?: readonly string[]) {
  const query = db.selectFrom('instances').select(['id', 'controller_id', 'tag_mappings']).where('org_id', '=', orgId).where('site_code', '=', siteCode)
  if (controllerIds === undefined) return query.orderBy('id').execute()
  const out: Array<{ id: string; controller_id: string; tag_mappings: string }> = []
  for (let i = 0; i < controllerIds.length; i += CHUNK) {
    out.push(
      ...(await query
        .where('controller_id', 'in', controllerIds.slice(i, i + CHUNK))
        .orderBy('id')
        .execute()),
    )
  }
  return out
}

export function updateInstance(db: Db, orgId: OrgId, siteCode: string, id: string, changes: InstanceChanges) {
  return db.updateTable('instances').set(changes).where('org_id', '=', orgId).where('site_code', '=', siteCode).where('id', '=', id).executeTakeFirst()
}

export function deleteInstance(db: Db, orgId: OrgId, siteCode: string, id: string) {
  return db.deleteFrom('instances').where('org_id', '=', orgId).where('site_code', '=', siteCode).where('id', '=', id).executeTakeFirst()
}

export async function countInstances(db: Db, orgId: OrgId, siteCode: string): Promise<number> {
  const row = await db
    .selectFrom('instances')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Instances and mapped tags per controller, for the poll budget. */
export async function loadByController(db: Db, orgId: OrgId, siteCode: string, controllerIds: readonly string[]) {
  const out: Array<{ controller_id: string; instances: number; tags: number }> = []
  for (let i = 0; i < controllerIds.length; i += CHUNK) {
    const rows = await db
      .selectFrom('instances')
      .select((eb) => ['controller_id', eb.fn.countAll().as('instances'), eb.fn.sum('tag_count').as('tags')])
      .where('org_id', '=', orgId)
      .where('site_code', '=', siteCode)
      .where('controller_id', 'in', controllerIds.slice(i, i + CHUNK))
      .groupBy('controller_id')
      .execute()
    for (const r of rows) out.push({ controller_id: r.controller_id, instances: Number(r.instances), tags: Number(r.tags ?? 0) })
  }
  return out
}
