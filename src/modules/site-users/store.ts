import type { Db, SiteUsersTable } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

// Every public read leaves pin_hash behind; only findSiteUserForPinCheck returns it.
const PUBLIC_COLUMNS = ['id', 'email', 'display_name', 'site_role', 'created_at', 'updated_at', 'pin_changed_at'] as const

export function insertSiteUser(db: Db, row: SiteUsersTable) {
  return db.insertInto('site_users').values(row).execute()
}

export function findSiteUser(db: Db, orgId: OrgId, userId: string) {
  return db
    .selectFrom('site_users')
    .select([...PUBLIC_COLUMNS, 'token_version'])
    .where('org_id', '=', orgId)
    .where('id', '=', userId)
    .executeTakeFirst()
}

export function findSiteUserByEmail(db: Db, orgId: OrgId, email: string) {
  return db.selectFrom('site_users').select(PUBLIC_COLUMNS).where('org_id', '=', orgId).where('email', '=', email).executeTakeFirst()
}

export function findSiteUserForPinCheck(db: Db, orgId: OrgId, email: string) {
  return db
    .selectFrom('site_users')
    .select(['id', 'site_role', 'pin_hash', 'token_version'])
    .where('org_id', '=', orgId)
    .where('email', '=', email)
    .executeTakeFirst()
}

/** Keyset page ordered by (email, id): stable while others write. */
export function listSiteUsers(db: Db, orgId: OrgId, limit: number, after: readonly [string, string] | undefined) {
  let query = db.selectFrom('site_users').select(PUBLIC_COLUMNS).where('org_id', '=', orgId)
  if (after) {
    const [email, id] = after
    query = query.where((eb) => eb.or([eb('email', '>', email), eb.and([eb('email', '=', email), eb('id', '>', id)])]))
  }
  return query.orderBy('email').orderBy('id').limit(limit).execute()
}

export function updateSiteUser(db: Db, orgId: OrgId, userId: string, patch: Partial<Pick<SiteUsersTable, 'display_name' | 'site_role' | 'updated_at'>>) {
  return db.updateTable('site_users').set(patch).where('org_id', '=', orgId).where('id', '=', userId).executeTakeFirst()
}

/** A new PIN invalidates every token issued before it (access and refresh) by bumping token_version. */
export function replaceSiteUserPin(db: Db, orgId: OrgId, userId: string, pinHash: string, at: number) {
  return db
    .updateTable('site_users')
    .set((eb) => ({ pin_hash: pinHash, pin_changed_at: at, updated_at: at, token_version: eb('token_version', '+', 1) }))
    .where('org_id', '=', orgId)
    .where('id', '=', userId)
    .executeTakeFirst()
}

export function deleteSiteUser(db: Db, orgId: OrgId, userId: string) {
  return db.deleteFrom('site_users').where('org_id', '=', orgId).where('id', '=', userId).executeTakeFirst()
}

/** The ids of the organisation's owners (the caller holds the site users' turn, service.ts lockSiteUsers). */
export function listSiteOwnerIds(db: Db, orgId: OrgId) {
  return db.selectFrom('site_users').select('id').where('org_id', '=', orgId).where('site_role', '=', 'owner').execute()
}
