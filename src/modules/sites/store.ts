import type { Db, SitesTable } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export function insertSite(db: Db, row: SitesTable) {
  return db.insertInto('sites').values(row).execute()
}

export function findSiteByCode(db: Db, orgId: OrgId, code: string) {
  return db.selectFrom('sites').selectAll().where('org_id', '=', orgId).where('code', '=', code).executeTakeFirst()
}

/** Whether the site exists, its row held against a delete until the transaction ends (PostgreSQL; SQLite writes one at a time). */
export async function holdSite(db: Db, orgId: OrgId, code: string, dialect: 'sqlite' | 'postgres'): Promise<boolean> {
  const query = db.selectFrom('sites').select('code').where('org_id', '=', orgId).where('code', '=', code)
  return (await (dialect === 'postgres' ? query.forKeyShare() : query).executeTakeFirst()) !== undefined
}

export function listSites(db: Db, orgId: OrgId, options: { limit: number; after?: string; status?: number }) {
  let query = db.selectFrom('sites').selectAll().where('org_id', '=', orgId)
  if (options.after !== undefined) query = query.where('code', '>', options.after)
  if (options.status !== undefined) query = query.where('status', '=', options.status)
  return query
    .orderBy('code')
    .limit(options.limit + 1)
    .execute()
}

export function updateSite(db: Db, orgId: OrgId, code: string, changes: Partial<Omit<SitesTable, 'org_id' | 'code' | 'created_at'>>) {
  return db.updateTable('sites').set(changes).where('org_id', '=', orgId).where('code', '=', code).executeTakeFirst()
}

/** Foreign keys of every area cascade from (org_id, code). */
export function deleteSite(db: Db, orgId: OrgId, code: string) {
  return db.deleteFrom('sites').where('org_id', '=', orgId).where('code', '=', code).executeTakeFirst()
}
