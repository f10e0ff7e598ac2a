import { isRole, roleAtLeast, type Actor, type Role } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'
import { invalidField, NotFound } from '../../errors/domain-error.ts'
import { decodeCursor, toPage } from '../../http/paging.ts'
import { newId, type OrgId } from '../../ids.ts'
import { lockUntilCommit } from '../../db/transaction-lock.ts'
import { recordAudit } from '../audit/service.ts'
import { LastSiteOwner, SiteRoleAboveCaller, SiteUserEmailTaken } from './errors.ts'
import { DEFAULT_SCRYPT_COST, hashPin, verifyPin, type ScryptCost } from './pin-hash.ts'
import type { CreateSiteUserInput, ListSiteUsersQueryInput, SiteUser, UpdateSiteUserInput } from './schemas.ts'
import {
  deleteSiteUser,
  findSiteUser,
  findSiteUserByEmail,
  findSiteUserForPinCheck,
  insertSiteUser,
  listSiteUsers,
  listSiteOwnerIds,
  replaceSiteUserPin,
  updateSiteUser,
} from './store.ts'

const iso = (ms: number) => new Date(ms).toISOString()

export const normaliseEmail = (email: string) => email.trim().toLowerCase()

/** The display name as stored: trimmed, so one of spaces only (1 character for the schema) is refused naming it. */
function displayNameOf(text: string): string {
  const name = text.trim()
  if (name === '') throw invalidField('/displayName', 'must not be blank (spaces only)')
  return name
}

function toSiteUser(row: {
  id: string
  email: string
  display_name: string
  site_role: string
  created_at: number
  updated_at: number
  pin_changed_at: number
}): SiteUser {
  return {
    id: row.id,
    email: row.email,
    displayName: row.display_name,
    siteRole: row.site_role,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    pinChangedAt: iso(row.pin_changed_at),
  }
}

/** What sign-in and token validation need to know about a site user; never the PIN hash. */
export interface SiteUserCredentialState {
  id: string
  role: Role
  tokenVersion: number
}

export function createSiteUsersService(deps: { handle: DatabaseHandle; clock: Clock; scryptCost?: ScryptCost }) {
  const { handle, clock } = deps
  const db = handle.db
  const cost = deps.scryptCost ?? DEFAULT_SCRYPT_COST
  // A real hash of nothing anyone knows, with the same cost: an unknown e-mail takes as long as a wrong PIN.
  let dummyHash: Promise<string> | undefined

  function checkRank(actor: Actor, ...roles: string[]): void {
    for (const role of roles) if (!isRole(role) || !roleAtLeast(actor.role, role)) throw new SiteRoleAboveCaller()
  }

  /**
   * Demotions and removals of one organisation's site users take turns (PostgreSQL: an advisory lock across the
   * processes; SQLite: the write lock), taken before the user is read: the last-owner count then sees every commit
   * before it, and a change of a user that a removal deleted meanwhile answers 404 (PostgreSQL reads committed rows:
   * without the turn, a PATCH of a user read before a concurrent DELETE committed found no row to answer, a 500;
   * test/hardening/org-concurrency.test.ts).
   */
  const lockSiteUsers = (trx: Db, orgId: OrgId) => lockUntilCommit(trx, handle.dialect, `site-users ${orgId}`)

  async function guardLastOwner(trx: Db, orgId: OrgId, userId: string): Promise<void> {
    const owners = await listSiteOwnerIds(trx, orgId)
    if (owners.length <= 1 && owners.some((o) => o.id === userId)) throw new LastSiteOwner()
  }

  async function requireUser(trx: Db, orgId: OrgId, userId: string) {
    const row = await findSiteUser(trx, orgId, userId)
    if (!row) throw new NotFound()
    return row
  }

  return {
    normaliseEmail,

    /** Adds a site user; throws Forbidden (role above the caller's) or Conflict (e-mail taken). */
    async create(orgId: OrgId, actor: Actor, input: CreateSiteUserInput): Promise<SiteUser> {
      checkRank(actor, input.siteRole)
      const displayName = displayNameOf(input.displayName)
      const now = clock.now()
      const email = normaliseEmail(input.email)
      const pinHash = await hashPin(input.pin, cost)
      const row = {
        org_id: orgId,
        id: newId('su', now),
        email,
        display_name: displayName,
        site_role: input.siteRole,
        pin_hash: pinHash,
        token_version: 1,
        created_at: now,
        updated_at: now,
        pin_changed_at: now,
      }
      await db
        .transaction()
        .execute(async (trx) => {
          if (await findSiteUserByEmail(trx, orgId, email)) throw new SiteUserEmailTaken()
          await insertSiteUser(trx, row)
          await recordAudit(trx, clock, orgId, actor, { action: 'site_user.created', target: row.id, detail: { email, siteRole: input.siteRole } })
        })
        .catch(async (err: unknown) => {
          // Two concurrent adds of one e-mail: the unique (org_id, email) index decides, the loser gets 409.
          if (!(err instanceof SiteUserEmailTaken) && (await findSiteUserByEmail(db, orgId, email))) throw new SiteUserEmailTaken()
          throw err
        })
      return toSiteUser(row)
    },

    async list(orgId: OrgId, page: ListSiteUsersQueryInput) {
      const limit = page.limit ?? 50
      const after = decodeCursor(page.cursor, ['string', 'string']) as readonly [string, string] | undefined
      const rows = await listSiteUsers(db, orgId, limit + 1, after)
      return toPage(rows, limit, toSiteUser, (r) => [r.email, r.id])
    },

    async get(orgId: OrgId, userId: string): Promise<SiteUser> {
      return toSiteUser(await requireUser(db, orgId, userId))
    },

    async findByEmail(orgId: OrgId, email: string): Promise<SiteUser | undefined> {
      const row = await findSiteUserByEmail(db, orgId, normaliseEmail(email))
      return row && toSiteUser(row)
    },

    /** Renames or changes the role; Forbidden above the caller's rank, Conflict for the last owner. */
    async update(orgId: OrgId, actor: Actor, userId: string, patch: UpdateSiteUserInput): Promise<SiteUser> {
      return db.transaction().execute(async (trx) => {
        await lockSiteUsers(trx, orgId)
        const row = await requireUser(trx, orgId, userId)
        checkRank(actor, row.site_role, ...(patch.siteRole ? [patch.siteRole] : []))
        if (row.site_role === 'owner' && patch.siteRole !== undefined && patch.siteRole !== 'owner') await guardLastOwner(trx, orgId, userId)
        const now = clock.now()
        const changes = {
          ...(patch.displayName !== undefined ? { display_name: displayNameOf(patch.displayName) } : {}),
          ...(patch.siteRole !== undefined ? { site_role: patch.siteRole } : {}),
          updated_at: now,
        }
        // A removal that did not take the turn (another process's SQL, a tenant import) deleted it meanwhile: 404.
        if (Number((await updateSiteUser(trx, orgId, userId, changes)).numUpdatedRows) === 0) throw new NotFound()
        await recordAudit(trx, clock, orgId, actor, { action: 'site_user.updated', target: userId, detail: { ...patch } })
        return toSiteUser((await findSiteUser(trx, orgId, userId))!)
      })
    },

    /** Replaces the PIN; every token issued before stops working (access at once, refresh at next use). */
    async setPin(orgId: OrgId, actor: Actor, userId: string, pin: string): Promise<void> {
      const pinHash = await hashPin(pin, cost)
      await db.transaction().execute(async (trx) => {
        const row = await requireUser(trx, orgId, userId)
        if (actor.subject !== userId) checkRank(actor, row.site_role)
        // Removed since it was read (PostgreSQL reads committed rows; the hash took its time before): 404, no audit row.
        if (Number((await replaceSiteUserPin(trx, orgId, userId, pinHash, clock.now())).numUpdatedRows) === 0) throw new NotFound()
        await recordAudit(trx, clock, orgId, actor, { action: 'site_user.pin_set', target: userId })
      })
    },

    /** Removes a site user and their refresh tokens; Conflict for the last owner. */
    async remove(orgId: OrgId, actor: Actor, userId: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await lockSiteUsers(trx, orgId)
        const row = await requireUser(trx, orgId, userId)
        checkRank(actor, row.site_role)
        if (row.site_role === 'owner') await guardLastOwner(trx, orgId, userId)
        // A concurrent remove deleted the user after it was read: that request removed it, this one answers 404.
        if (Number((await deleteSiteUser(trx, orgId, userId)).numDeletedRows) === 0) throw new NotFound()
        await recordAudit(trx, clock, orgId, actor, { action: 'site_user.removed', target: userId, detail: { email: row.email } })
      })
    },

    /**
     * The PIN check of sign-in: the user when e-mail and PIN match, else undefined. An unknown e-mail runs
     * scrypt against a dummy hash, so both failures cost the same time.
     */
    async checkPin(orgId: OrgId, email: string, pin: string): Promise<SiteUserCredentialState | undefined> {
      const row = await findSiteUserForPinCheck(db, orgId, normaliseEmail(email))
      dummyHash ??= hashPin('not-a-pin', cost)
      const ok = await verifyPin(pin, row?.pin_hash ?? (await dummyHash))
      if (!row || !ok || !isRole(row.site_role)) return undefined
      return { id: row.id, role: row.site_role, tokenVersion: row.token_version }
    },

    /** Current role and token version of a site user, for every request a site-PIN token makes. */
    async credentialState(orgId: OrgId, userId: string): Promise<SiteUserCredentialState | undefined> {
      const row = await findSiteUser(db, orgId, userId)
      if (!row || !isRole(row.site_role)) return undefined
      return { id: row.id, role: row.site_role, tokenVersion: row.token_version }
    },
  }
}

export type SiteUsersService = ReturnType<typeof createSiteUsersService>
