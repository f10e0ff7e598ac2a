import type { Db, MembershipsTable } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export type MembershipStatus = 'pending' | 'active' | 'revoked'

export function findMembership(db: Db, orgId: OrgId, accountId: string) {
  return db.selectFrom('memberships').selectAll().where('org_id', '=', orgId).where('account_id', '=', accountId).executeTakeFirst()
}

/** Records a membership request; an existing row (any status) is left alone, so N racing sign-ins insert one. */
export async function insertPendingMembership(db: Db, row: MembershipsTable): Promise<void> {
  await db
    .insertInto('memberships')
    .values(row)
    .onConflict((oc) => oc.columns(['org_id', 'account_id']).doNothing())
    .execute()
}

/** Profile claims seen at sign-in; a null claim keeps what is stored. */
export function updateMembershipProfile(db: Db, orgId: OrgId, accountId: string, email: string | null, name: string | null) {
  return db
    .updateTable('memberships')
    .set((eb) => ({ email: eb.fn.coalesce(eb.val(email), eb.ref('email')), name: eb.fn.coalesce(eb.val(name), eb.ref('name')) }))
    .where('org_id', '=', orgId)
    .where('account_id', '=', accountId)
    .execute()
}

/** Moves a revoked account back to pending (an explicit new sign-in is a new request). */
export function reopenMembership(db: Db, orgId: OrgId, accountId: string, at: number) {
  return db
    .updateTable('memberships')
    .set({ status: 'pending', role: null, requested_at: at, decided_at: null, decided_by: null })
    .where('org_id', '=', orgId)
    .where('account_id', '=', accountId)
    .where('status', '=', 'revoked')
    .executeTakeFirst()
}

export function activateMembership(db: Db, orgId: OrgId, accountId: string, role: string, at: number, by: string) {
  return db
    .updateTable('memberships')
    .set({ status: 'active', role, decided_at: at, decided_by: by })
    .where('org_id', '=', orgId)
    .where('account_id', '=', accountId)
    .where('status', '=', 'pending')
    .executeTakeFirst()
}

export function revokeMembership(db: Db, orgId: OrgId, accountId: string, at: number, by: string) {
  return db
    .updateTable('memberships')
    .set({ status: 'revoked', role: null, decided_at: at, decided_by: by })
    .where('org_id', '=', orgId)
    .where('account_id', '=', accountId)
    .where('status', '<>', 'revoked')
    .executeTakeFirst()
}

export async function countActiveOwners(db: Db, orgId: OrgId): Promise<number> {
  const row = await db
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('status', '=', 'active')
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Pending and active members (never revoked), by account id; `after` is the last account id of the previous page. */
export function listMemberships(db: Db, orgId: OrgId, options: { status: 'pending' | 'active' | undefined; after: string | undefined; limit: number }) {
  let query = db.selectFrom('memberships').selectAll().where('org_id', '=', orgId)
  query = options.status === undefined ? query.where('status', 'in', ['pending', 'active']) : query.where('status', '=', options.status)
  if (options.after !== undefined) query = query.where('account_id', '>', options.after)
  return query
    .orderBy('account_id')
    .limit(options.limit + 1)
    .execute()
}

/**
 * PostgreSQL runs concurrent transactions in READ COMMITTED: two admins removing the two last owners at once
 * would both count two. Locking the organisation row serialises membership changes of one organisation.
 * SQLite has a single writer, so its transactions are serial already.
 */
export async function lockOrgForMembershipChange(db: Db, orgId: OrgId, dialect: 'sqlite' | 'postgres'): Promise<void> {
  if (dialect !== 'postgres') return
  await db.selectFrom('orgs').select('id').where('id', '=', orgId).forUpdate().execute()
}
