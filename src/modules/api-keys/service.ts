import { randomUUID } from 'node:crypto'
import { roleAtLeast, isRole, type Actor, type Role } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import { invalidField, NotFound } from '../../errors/domain-error.ts'
import type { OrgId } from '../../ids.ts'
import { recordAudit } from '../audit/service.ts'
import { ExpiryPolicyViolation, ReservedRole, RoleAboveCaller } from './errors.ts'
import { generatePlaintext, KEY_PATTERN, KEY_PREFIX_LENGTH, verifierOf, verifiersEqual } from './plaintext.ts'
import type { ApiKey, MintApiKeyInput, MintedApiKey } from './schemas.ts'
import { findActiveApiKey, findActiveKeyByVerifier, insertApiKey, listActiveApiKeys, markKeysUsed, revokeApiKey } from './store.ts'

const HOUR_MS = 3_600_000
export const MIN_LIFETIME_MS = HOUR_MS
export const MAX_LIFETIME_MS = 730 * 24 * HOUR_MS
const RESERVED_ROLES = new Set(['platform_admin', 'platform_operator', 'service'])

const iso = (ms: number) => new Date(ms).toISOString()

/** Checks a mint request against spec 4.1 rules 5 and 6; throws ReservedRole, ValidationFailed, Forbidden or ExpiryPolicyViolation. */
export function checkMintRequest(actor: Actor, input: MintApiKeyInput, now: number): { expiresAt: number } {
  if (RESERVED_ROLES.has(input.role.toLowerCase())) throw new ReservedRole(input.role)
  if (!isRole(input.role)) throw invalidField('/role', 'must be one of owner, admin, member')
  if (!roleAtLeast(actor.role, input.role)) throw new RoleAboveCaller()
  const expiresAt = Date.parse(input.expiresAt)
  if (!Number.isFinite(expiresAt)) throw invalidField('/expiresAt', 'must be an RFC 3339 date-time')
  if (expiresAt - now < MIN_LIFETIME_MS || expiresAt - now > MAX_LIFETIME_MS) throw new ExpiryPolicyViolation()
  return { expiresAt }
}

/** A key that authenticates, as the auth selector needs it (auth/api-key-validator.ts). */
export interface ActiveApiKey {
  orgId: OrgId
  keyId: string
  role: Role
  /** Epoch ms; the caller checks it against its clock on every use. */
  expiresAt: number
}

export function createApiKeysService(deps: { handle: DatabaseHandle; clock: Clock; keySecret: Buffer | undefined }) {
  const { handle, clock } = deps
  const db = handle.db
  if (deps.keySecret && deps.keySecret.length < 32) throw new TypeError('the verifier secret must hold at least 32 bytes')
  return {
    /** Mints a key for the caller's organisation; the plaintext is in the result and nowhere else. */
    async mint(orgId: OrgId, actor: Actor, input: MintApiKeyInput): Promise<MintedApiKey> {
      if (!deps.keySecret) throw new TypeError('minting a key needs the verifier secret')
      const now = clock.now()
      const { expiresAt } = checkMintRequest(actor, input, now)
      const plaintext = generatePlaintext()
      const keyId = randomUUID()
      await db.transaction().execute(async (trx) => {
        await insertApiKey(trx, {
          org_id: orgId,
          id: keyId,
          prefix: plaintext.slice(0, KEY_PREFIX_LENGTH),
          verifier: verifierOf(deps.keySecret!, plaintext),
          role: input.role,
          name: input.name,
          created_by_kind: actor.kind,
          created_by_user_id: actor.subject,
          created_by_account: actor.account ?? null,
          created_at: now,
          expires_at: expiresAt,
          last_used_at: null,
          revoked_at: null,
          revoke_reason: null,
          revoked_by: null,
        })
        await recordAudit(trx, clock, orgId, actor, { action: 'api_key.minted', target: keyId, detail: { role: input.role, name: input.name } })
      })
      return {
        keyId,
        keyPrefix: plaintext.slice(0, KEY_PREFIX_LENGTH),
        plaintext,
        role: input.role,
        name: input.name,
        expiresAt: iso(expiresAt),
        createdAt: iso(now),
      }
    },

    /** Non-revoked keys of the organisation, newest created first. */
    async list(orgId: OrgId): Promise<ApiKey[]> {
      const rows = await listActiveApiKeys(db, orgId)
      return rows.map((r) => ({
        keyId: r.id,
        keyPrefix: r.prefix,
        role: r.role,
        name: r.name,
        createdByUserId: r.created_by_user_id,
        createdAt: iso(r.created_at),
        expiresAt: iso(r.expires_at),
        lastUsedAt: r.last_used_at === null ? null : iso(r.last_used_at),
      }))
    },

    /** Revokes at once in every process sharing the database; absent, foreign or revoked: NotFound. */
    async revoke(orgId: OrgId, actor: Actor, keyId: string, reason: string | null): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const result = await revokeApiKey(trx, orgId, keyId, clock.now(), actor.subject, reason)
        if (Number(result.numUpdatedRows) === 0) throw new NotFound()
        await recordAudit(trx, clock, orgId, actor, { action: 'api_key.revoked', target: keyId, detail: reason === null ? undefined : { reason } })
        await handle.announceInvalidation(trx)
      })
      handle.invalidateLocally()
    },

    /** The creator chain of a key, for reminders: who minted it, by kind. */
    async findCreator(orgId: OrgId, keyId: string) {
      const row = await findActiveApiKey(db, orgId, keyId)
      return row && { kind: row.created_by_kind, subject: row.created_by_user_id }
    },

    /** The verifier a well-formed plaintext is stored under; undefined for a malformed one, which is worth no query. */
    verifierOf(plaintext: string): string | undefined {
      if (!KEY_PATTERN.test(plaintext)) return undefined
      if (!deps.keySecret) throw new TypeError('checking a key needs the verifier secret')
      return verifierOf(deps.keySecret, plaintext)
    },

    /** The non-revoked key stored under a verifier (compared in constant time) whose role is known; undefined otherwise. */
    async activeKeyByVerifier(orgId: OrgId, verifier: string): Promise<ActiveApiKey | undefined> {
      const row = await findActiveKeyByVerifier(db, orgId, verifier)
      if (!row || !verifiersEqual(row.verifier, verifier) || !isRole(row.role)) return undefined
      return { orgId: row.org_id as OrgId, keyId: row.id, role: row.role, expiresAt: row.expires_at }
    },

    /** Records lastUsedAt for a batch of uses in one transaction (each names its organisation); never moves it back. */
    async markUsed(uses: ReadonlyArray<{ orgId: string; keyId: string; at: number }>): Promise<void> {
      await db.transaction().execute((trx) => markKeysUsed(trx, uses))
    },

    /** The name of a key that still authenticates, for GET /api/me. */
    async nameOf(orgId: OrgId, keyId: string): Promise<string | undefined> {
      return (await findActiveApiKey(db, orgId, keyId))?.name
    },
  }
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>
