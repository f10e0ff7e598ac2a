import { roleAtLeast, type Access, type AccountClaims, type Actor, type Role } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { Db, MembershipsTable } from '../../db/schema.ts'
import { NotFound } from '../../errors/domain-error.ts'
import { decodeCursor, toPage } from '../../http/paging.ts'
import type { OrgId } from '../../ids.ts'
import { recordAudit } from '../audit/service.ts'
import { LastOwner, MembershipAlreadyActive, RoleAboveCaller } from './members-errors.ts'
import type { Member, MemberList, ListMembersQueryInput } from './members-schemas.ts'
import {
  activateMembership,
  countActiveOwners,
  findMembership,
  insertPendingMembership,
  listMemberships,
  lockOrgForMembershipChange,
  reopenMembership,
  revokeMembership,
  updateMembershipProfile,
} from './members-store.ts'

/**
 * Ends every browser session of an account at an organisation inside the caller's transaction and answers how
 * many: the sign-in side's (auth/sessions/end-sessions.ts), passed in by app.ts so that this module imports no auth.
 */
export type EndSessionsOfAccount = (trx: Db, orgId: OrgId, accountId: string) => Promise<number>

/** The caller of an administrative change: its actor, and whether platform authority lifts the role ceiling. */
export interface MemberAdmin {
  readonly actor: Actor
  readonly isPlatformAdmin: boolean
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

function toMember(row: MembershipsTable): Member {
  return {
    accountId: row.account_id,
    status: row.status as Member['status'],
    role: row.role as Role | null,
    email: row.email,
    name: row.name,
    requestedAt: new Date(row.requested_at).toISOString(),
    decidedAt: iso(row.decided_at),
  }
}

function toAccess(row: Pick<MembershipsTable, 'status' | 'role'>): Access {
  if (row.status === 'active' && (row.role === 'owner' || row.role === 'admin' || row.role === 'member')) return { status: 'active', role: row.role }
  return { status: row.status === 'revoked' ? 'revoked' : 'pending' }
}

export function createMembersService(deps: { handle: DatabaseHandle; clock: Clock; endSessions: EndSessionsOfAccount }) {
  const { handle, clock, endSessions } = deps
  const db = handle.db

  function pendingRow(orgId: OrgId, claims: AccountClaims): MembershipsTable {
    return {
      org_id: orgId,
      account_id: claims.oid,
      status: 'pending',
      role: null,
      email: claims.email ?? null,
      name: claims.name ?? null,
      requested_at: clock.now(),
      decided_at: null,
      decided_by: null,
    }
  }

  return {
    /** The stored access of an account, recording nothing; undefined when it never signed in here. */
    async accessOf(orgId: OrgId, accountId: string): Promise<Access | undefined> {
      const row = await findMembership(db, orgId, accountId)
      return row && toAccess(row)
    },

    /**
     * The access of an account on a bearer call. An account never seen here gets a pending membership
     * request recorded (spec 4.5: the first sign-in asks to join); a revoked one stays revoked.
     */
    async accessForBearer(orgId: OrgId, claims: AccountClaims): Promise<Access> {
      const row = await findMembership(db, orgId, claims.oid)
      if (row) return toAccess(row)
      await insertPendingMembership(db, pendingRow(orgId, claims))
      const stored = await findMembership(db, orgId, claims.oid)
      return stored ? toAccess(stored) : { status: 'pending' }
    },

    /**
     * An interactive sign-in: records the request of an unknown account, reopens a revoked one (signing in
     * again is asking again), refreshes email and name from the ID token.
     */
    async recordSignIn(orgId: OrgId, claims: AccountClaims): Promise<Access> {
      return db.transaction().execute(async (trx) => {
        await insertPendingMembership(trx, pendingRow(orgId, claims))
        await reopenMembership(trx, orgId, claims.oid, clock.now())
        await updateMembershipProfile(trx, orgId, claims.oid, claims.email ?? null, claims.name ?? null)
        const row = await findMembership(trx, orgId, claims.oid)
        return row ? toAccess(row) : { status: 'pending' as const }
      })
    },

    /** The e-mail an account's membership holds, while the membership is not revoked. */
    async emailOf(orgId: OrgId, accountId: string): Promise<string | undefined> {
      const row = await findMembership(db, orgId, accountId)
      return row && row.status !== 'revoked' ? (row.email ?? undefined) : undefined
    },

    /** The name and e-mail an account's membership holds (from its last sign-in), for GET /api/me. */
    async profileOf(orgId: OrgId, accountId: string): Promise<{ name: string | null; email: string | null } | undefined> {
      const row = await findMembership(db, orgId, accountId)
      return row && { name: row.name, email: row.email }
    },

    /** Pending and active members, by account id. */
    async list(orgId: OrgId, query: ListMembersQueryInput): Promise<MemberList> {
      const limit = query.limit ?? 100
      const after = decodeCursor(query.cursor, ['string'])?.[0] as string | undefined
      const rows = await listMemberships(db, orgId, { status: query.status, after, limit })
      return toPage(rows, limit, toMember, (r) => [r.account_id])
    },

    /** Activates a pending request; throws NotFound, Conflict (already active) or Forbidden (role above the caller's). */
    async approve(orgId: OrgId, admin: MemberAdmin, accountId: string, role: Role): Promise<Member> {
      if (!admin.isPlatformAdmin && !roleAtLeast(admin.actor.role, role)) throw new RoleAboveCaller('grant')
      const row = await db.transaction().execute(async (trx) => {
        // As revoke: membership changes of one organisation take turns, so a second approval reads the first's answer
        // (409, not a 404 from an update that found nothing), and an approval never holds the membership row while
        // waiting for the organisation row a removal locked first (a deadlock on PostgreSQL).
        await lockOrgForMembershipChange(trx, orgId, handle.dialect)
        const current = await findMembership(trx, orgId, accountId)
        if (!current || current.status === 'revoked') throw new NotFound()
        if (current.status === 'active') throw new MembershipAlreadyActive()
        const result = await activateMembership(trx, orgId, accountId, role, clock.now(), admin.actor.subject)
        if (Number(result.numUpdatedRows) !== 1) throw new NotFound()
        await recordAudit(trx, clock, orgId, admin.actor, { action: 'member.approved', target: accountId, detail: { role } })
        await handle.announceInvalidation(trx)
        return findMembership(trx, orgId, accountId)
      })
      handle.invalidateLocally()
      if (!row) throw new NotFound()
      return toMember(row)
    },

    /**
     * Revokes an active member or refuses a pending request, and ends the account's sessions in the same
     * transaction. Throws NotFound, Forbidden (target above the caller) or Conflict (the last owner).
     */
    async revoke(orgId: OrgId, admin: MemberAdmin, accountId: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await lockOrgForMembershipChange(trx, orgId, handle.dialect)
        const current = await findMembership(trx, orgId, accountId)
        if (!current || current.status === 'revoked') throw new NotFound()
        const access = toAccess(current)
        if (access.status === 'active') {
          if (!admin.isPlatformAdmin && !roleAtLeast(admin.actor.role, access.role)) throw new RoleAboveCaller('remove')
          if (access.role === 'owner' && (await countActiveOwners(trx, orgId)) <= 1) throw new LastOwner()
        }
        await revokeMembership(trx, orgId, accountId, clock.now(), admin.actor.subject)
        const ended = await endSessions(trx, orgId, accountId)
        await recordAudit(trx, clock, orgId, admin.actor, {
          action: access.status === 'active' ? 'member.revoked' : 'member.request_refused',
          target: accountId,
          detail: { previousStatus: current.status, previousRole: current.role, sessionsEnded: ended },
        })
        await handle.announceInvalidation(trx)
      })
      handle.invalidateLocally()
    },
  }
}

export type MembersService = ReturnType<typeof createMembersService>
