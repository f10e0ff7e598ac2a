import type { Db, PendingLoginsTable, SessionsTable } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export function insertPendingLogin(db: Db, row: PendingLoginsTable) {
  return db.insertInto('pending_logins').values(row).execute()
}

/** Single use: the row is deleted as it is read, so a replayed callback finds nothing. */
export async function takePendingLogin(db: Db, orgId: OrgId, id: string) {
  const row = await db.selectFrom('pending_logins').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
  if (!row) return undefined
  const deleted = await db.deleteFrom('pending_logins').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
  // Two callbacks racing on one login: only the one that deleted the row may use it.
  return Number(deleted.numDeletedRows) === 1 ? row : undefined
}

export function deleteExpiredPendingLogins(db: Db, orgId: OrgId, now: number) {
  return db.deleteFrom('pending_logins').where('org_id', '=', orgId).where('expires_at', '<=', now).execute()
}

export function insertSession(db: Db, row: SessionsTable) {
  return db.insertInto('sessions').values(row).execute()
}

export function findSession(db: Db, orgId: OrgId, id: string) {
  return db.selectFrom('sessions').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}

export function updateSessionTokens(
  db: Db,
  orgId: OrgId,
  id: string,
  tokens: { access_token: string; access_expires_at: number; refresh_token: string | null },
) {
  return db.updateTable('sessions').set(tokens).where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}

export function deleteSession(db: Db, orgId: OrgId, id: string) {
  return db.deleteFrom('sessions').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}

export function deleteSessionsOfAccount(db: Db, orgId: OrgId, accountId: string) {
  return db.deleteFrom('sessions').where('org_id', '=', orgId).where('account_id', '=', accountId).executeTakeFirst()
}

export function deleteExpiredSessionsOfAccount(db: Db, orgId: OrgId, accountId: string, now: number) {
  return db.deleteFrom('sessions').where('org_id', '=', orgId).where('account_id', '=', accountId).where('expires_at', '<=', now).execute()
}
