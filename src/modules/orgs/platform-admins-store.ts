import type { Db, PlatformAuditTable } from '../../db/schema.ts'

export function isPlatformAdminAccount(db: Db, accountId: string) {
  return db.selectFrom('platform_admins').select('account_id').where('account_id', '=', accountId).executeTakeFirst()
}

/** Idempotent: adding an existing admin keeps its first `added_at`. */
export async function insertPlatformAdmin(db: Db, accountId: string, note: string | null, at: number): Promise<boolean> {
  const result = await db
    .insertInto('platform_admins')
    .values({ account_id: accountId, note, added_at: at })
    .onConflict((oc) => oc.column('account_id').doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0
}

export function deletePlatformAdmin(db: Db, accountId: string) {
  return db.deleteFrom('platform_admins').where('account_id', '=', accountId).executeTakeFirst()
}

export function listPlatformAdmins(db: Db) {
  return db.selectFrom('platform_admins').selectAll().orderBy('account_id').execute()
}

export function insertPlatformAudit(db: Db, row: PlatformAuditTable) {
  return db.insertInto('platform_audit').values(row).execute()
}

/** Newest first; `before` is the (at, id) of the last row of the previous page. */
export function listPlatformAudit(db: Db, limit: number, before?: { at: number; id: string }) {
  let query = db.selectFrom('platform_audit').selectAll()
  if (before) query = query.where((eb) => eb.or([eb('at', '<', before.at), eb.and([eb('at', '=', before.at), eb('id', '<', before.id)])]))
  return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute()
}
