import { createHash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import { Unauthorized } from '../../errors/domain-error.ts'
import { newId, randomBase62, type OrgId } from '../../ids.ts'
import type { Org } from '../../identity.ts'
import { issueAccessToken } from './access-token.ts'
import { PinLocked, SignInThrottled } from './errors.ts'
import { accountSubject, addressSubject, type Lockout } from './lockout.ts'
import { deleteExpiredRefreshTokens, findRefreshToken, insertRefreshToken, markRefreshTokenUsed, revokeRefreshFamily } from './refresh-store.ts'
import type { SigningKey, SigningKeys } from './signing-keys.ts'
import type { SiteUserCredential, SiteUserCredentials } from './site-users.ts'
import type { SiteSession } from './schemas.ts'
import { ACCESS_TOKEN_TTL_S, REFRESH_FAMILY_TTL_MS, REFRESH_TOKEN_TTL_MS } from './token-policy.ts'

export const REFRESH_TOKEN_PATTERN = /^srt_[0-9A-Za-z]{43}$/

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex')

/**
 * Site-PIN sign-in (spec 5 rule 7): PIN → access token + refresh token; refresh rotates the refresh token at
 * each use, and a reused one revokes its whole family. Every credential failure is the uniform Unauthorized.
 */
export function createSiteSignIn(deps: {
  handle: DatabaseHandle
  clock: Clock
  siteUsers: SiteUserCredentials
  signingKeys: SigningKeys
  lockout: Lockout
  log: FastifyBaseLogger
  /** Hears a failure that locked a subject and an attempt a lock refused (the metrics). */
  lockouts?: { locked(subject: 'account' | 'address'): void; refused(subject: 'account' | 'address'): void }
}) {
  const { handle, clock, siteUsers, signingKeys, lockout, log } = deps
  const db = handle.db

  // The signing key is fetched before any transaction: creating one opens its own (SQLite has one connection).
  async function session(
    trx: typeof db,
    key: SigningKey,
    org: Org,
    user: SiteUserCredential,
    familyId: string,
    familyExpiresAt: number,
    now: number,
  ): Promise<SiteSession> {
    const refreshToken = `srt_${randomBase62(43)}`
    const refreshExpiresAt = Math.min(now + REFRESH_TOKEN_TTL_MS, familyExpiresAt)
    await insertRefreshToken(trx, {
      org_id: org.id,
      id: newId('srt', now),
      family_id: familyId,
      user_id: user.id,
      token_hash: hashToken(refreshToken),
      token_version: user.tokenVersion,
      created_at: now,
      expires_at: refreshExpiresAt,
      family_expires_at: familyExpiresAt,
      used_at: null,
      revoked_at: null,
    })
    const access = await issueAccessToken(key, org, user, now)
    return {
      accessToken: access.token,
      tokenType: 'Bearer',
      expiresIn: ACCESS_TOKEN_TTL_S,
      expiresAt: new Date(access.expiresAt).toISOString(),
      refreshToken,
      refreshExpiresAt: new Date(refreshExpiresAt).toISOString(),
      user: { id: user.id, siteRole: user.role },
    }
  }

  async function revokeFamily(orgId: OrgId, familyId: string, reason: string): Promise<void> {
    await revokeRefreshFamily(db, orgId, familyId, clock.now())
    log.warn({ event: 'site_pin.refresh_family_revoked', orgId, familyId, reason }, 'site-PIN refresh family revoked')
  }

  /**
   * Checks e-mail and PIN; throws SignInThrottled (address locked), PinLocked (e-mail locked, known or not) — both
   * before any PIN is checked, so a locked e-mail answers the same whatever the PIN — or Unauthorized (unknown
   * e-mail or wrong PIN: same answer, same cost). The attempt is reserved on both counters before the check.
   */
  async function authenticate(org: Org, email: string, pin: string, clientAddress: string): Promise<SiteUserCredential> {
    const address = addressSubject(clientAddress)
    const account = accountSubject(siteUsers.normaliseEmail(email))
    const reserved = await lockout.reserve(org.id, [address, account])
    if (reserved.refusedBy !== undefined) deps.lockouts?.refused(reserved.refusedBy === address ? 'address' : 'account')
    if (reserved.refusedBy === address) throw new SignInThrottled(reserved.lockedUntil, clock.now())
    if (reserved.refusedBy !== undefined) throw new PinLocked(reserved.lockedUntil, clock.now())
    const user = await siteUsers.checkPin(org.id, email, pin)
    if (!user) {
      log.info({ event: 'site_pin.sign_in_failed', orgId: org.id, clientAddress }, 'site-PIN sign-in failed')
      // A lock this failure's reservation set stays (a right PIN would have taken it back).
      if ((reserved.locksSet.get(address) ?? 0) > 0) deps.lockouts?.locked('address')
      if ((reserved.locksSet.get(account) ?? 0) > 0) deps.lockouts?.locked('account')
      throw new Unauthorized()
    }
    await lockout.clear(org.id, account)
    await lockout.release(org.id, address, reserved)
    return user
  }

  return {
    /** PIN sign-in: a new session (access and refresh token); the errors of `authenticate`. */
    async login(org: Org, email: string, pin: string, clientAddress: string): Promise<SiteSession> {
      const user = await authenticate(org, email, pin, clientAddress)
      const now = clock.now()
      await deleteExpiredRefreshTokens(db, org.id, user.id, now)
      log.info({ event: 'site_pin.signed_in', orgId: org.id, siteUserId: user.id }, 'site-PIN sign-in')
      const key = await signingKeys.current(org.id)
      return session(db, key, org, user, newId('srf', now), now + REFRESH_FAMILY_TTL_MS, now)
    },

    /** A site user changes their own PIN with the current one (same checks and locks as sign-in); every session ends. */
    async changePin(org: Org, email: string, pin: string, newPin: string, clientAddress: string): Promise<void> {
      const user = await authenticate(org, email, pin, clientAddress)
      await siteUsers.setPin(org.id, { kind: 'sitePin', subject: user.id, role: user.role }, user.id, newPin)
    },

    /** Exchanges a refresh token for a new pair; a used or revoked token revokes its family. Unauthorized otherwise. */
    async refresh(org: Org, refreshToken: string): Promise<SiteSession> {
      if (!REFRESH_TOKEN_PATTERN.test(refreshToken)) throw new Unauthorized()
      const row = await findRefreshToken(db, org.id, hashToken(refreshToken))
      if (!row) throw new Unauthorized()
      if (row.used_at !== null || row.revoked_at !== null) {
        await revokeFamily(org.id, row.family_id, row.revoked_at !== null ? 'revoked token presented' : 'used token presented again')
        throw new Unauthorized()
      }
      const now = clock.now()
      if (now >= row.expires_at) throw new Unauthorized()
      const user = await siteUsers.credentialState(org.id, row.user_id)
      if (!user || user.tokenVersion !== row.token_version) {
        await revokeFamily(org.id, row.family_id, 'PIN changed or user removed')
        throw new Unauthorized()
      }
      const key = await signingKeys.current(org.id)
      const rotated = await db.transaction().execute(async (trx) => {
        const marked = await markRefreshTokenUsed(trx, org.id, row.id, now)
        if (Number(marked.numUpdatedRows) === 0) return undefined
        return session(trx, key, org, user, row.family_id, row.family_expires_at, now)
      })
      if (!rotated) {
        await revokeFamily(org.id, row.family_id, 'concurrent reuse')
        throw new Unauthorized()
      }
      return rotated
    },

    /** Ends the sign-in the refresh token belongs to (its whole family); unknown tokens are ignored. */
    async logout(org: Org, refreshToken: string): Promise<void> {
      if (!REFRESH_TOKEN_PATTERN.test(refreshToken)) return
      const row = await findRefreshToken(db, org.id, hashToken(refreshToken))
      if (row) await revokeRefreshFamily(db, org.id, row.family_id, clock.now())
    },
  }
}

export type SiteSignIn = ReturnType<typeof createSiteSignIn>
