import { BlockList, isIPv4 } from 'node:net'
import { parseNetwork } from '../../auth/client-networks.ts'
import { roleAtLeast, isRole, type Actor, type Role } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'
import { invalidField, NotFound, Unauthorized } from '../../errors/domain-error.ts'
import type { OrgId } from '../../ids.ts'
import { recordAudit } from '../audit/service.ts'
import { ExpiryPolicyViolation, NetworksWiderThanCaller, ReservedRole, RoleAboveCaller } from './errors.ts'
import { keyIdGenerator } from './key-id.ts'
import { generatePlaintext, KEY_PATTERN, KEY_PREFIX_LENGTH, verifierOf, verifiersEqual } from './plaintext.ts'
import type { ApiKey, MintApiKeyInput, MintedApiKey } from './schemas.ts'
import type { SiteDependent } from '../sites/service.ts'
import {
  countActiveKeysOfSite,
  findActiveApiKey,
  findActiveKeyByVerifier,
  insertApiKey,
  listActiveApiKeys,
  markKeysUsed,
  revokeApiKey,
  revokeKeysOfSite,
} from './store.ts'

type PublicKeyRow = Awaited<ReturnType<typeof listActiveApiKeys>>[number]

const HOUR_MS = 3_600_000
export const MIN_LIFETIME_MS = HOUR_MS
export const MAX_LIFETIME_MS = 730 * 24 * HOUR_MS
const RESERVED_ROLES = new Set(['platform_admin', 'platform_operator', 'service'])

const iso = (ms: number) => new Date(ms).toISOString()

const SITE_DELETED = 'site deleted'

/**
 * Deleting a site revokes the keys restricted to it, in the delete's transaction (the preview counts them as
 * `apiKeys`): a site made later under the same code is another site, which a gateway key of the old one must not reach.
 */
export const apiKeysSiteDependent: SiteDependent = {
  name: 'apiKeys',
  count: countActiveKeysOfSite,
  async release(db, orgId, siteCode, { actor, clock }) {
    const ids = await revokeKeysOfSite(db, orgId, siteCode, clock.now(), actor.subject, SITE_DELETED)
    for (const id of ids)
      await recordAudit(db, clock, orgId, actor, { action: 'api_key.revoked', target: id, detail: { reason: SITE_DELETED, siteId: siteCode } })
    return ids.length
  },
}

/** RFC 9562 §4: a UUID is the same in any letter case; ids are minted and stored in lower case (key-id.ts). */
const storedKeyId = (keyId: string) => keyId.toLowerCase()

/** A key's stored client networks (canonical blocks joined by commas) as the API shows them; null: any address. */
const shownNetworks = (stored: string | null): string[] | null => (stored === null ? null : stored.split(','))

function toApiKey(r: PublicKeyRow): ApiKey {
  return {
    keyId: r.id,
    keyPrefix: r.prefix,
    role: r.role,
    name: r.name,
    createdByUserId: r.created_by_user_id,
    createdAt: iso(r.created_at),
    expiresAt: iso(r.expires_at),
    lastUsedAt: r.last_used_at === null ? null : iso(r.last_used_at),
    siteId: r.site_code,
    networks: shownNetworks(r.networks),
  }
}

/** The canonical CIDR blocks of a mint request, once each; a block that does not parse is a 400 naming it. */
export function checkNetworks(networks: readonly string[]): string[] {
  const blocks = networks.map((text, i) => {
    const block = parseNetwork(text)
    if (block === undefined) throw invalidField(`/networks/${i}`, 'must be a CIDR block such as 10.20.0.0/16 or 2001:db8::/48, or an IP address')
    return block
  })
  return [...new Set(blocks)]
}

/** Whether the canonical block `inner` lies wholly inside `outer` (same family, a prefix at least as long, its address inside). */
function isWithin(outer: string, inner: string): boolean {
  const [outerAddress = '', outerPrefix] = outer.split('/')
  const [innerAddress = '', innerPrefix] = inner.split('/')
  const family = isIPv4(outerAddress) ? 'ipv4' : 'ipv6'
  if (family !== (isIPv4(innerAddress) ? 'ipv4' : 'ipv6') || Number(outerPrefix) > Number(innerPrefix)) return false
  const list = new BlockList()
  list.addSubnet(outerAddress, Number(outerPrefix), family)
  return list.check(innerAddress, family)
}

/**
 * A key restricted to client networks mints only keys restricted to blocks inside its own (`stored`, canonical blocks
 * joined by commas): otherwise whoever holds it inside those networks could make a key that works from anywhere, as a
 * role above the caller's is refused. `requested` is the body's list as sent, so the pointer names the block sent.
 * Throws NetworksWiderThanCaller (403 naming `/networks` or `/networks/i`).
 */
export function checkNetworksWithin(stored: string, requested: readonly string[] | undefined): void {
  const own = stored.split(',')
  if (requested === undefined) throw new NetworksWiderThanCaller('/networks')
  const wider = requested.findIndex((text) => {
    const block = parseNetwork(text)
    return block === undefined || !own.some((outer) => isWithin(outer, block))
  })
  if (wider >= 0) throw new NetworksWiderThanCaller(`/networks/${wider}`)
}

/**
 * Who mints a key: its actor, and whether platform authority lifts the role ceiling (spec 4.1 rule 2 names a verified
 * platform admin beside the organisation's owners and admins, whatever its own membership; as for members' approvals).
 */
export type KeyMinter = Actor & { readonly isPlatformAdmin?: boolean }

/** Checks a mint request against spec 4.1 rules 5 and 6; throws ReservedRole, ValidationFailed, Forbidden or ExpiryPolicyViolation. */
export function checkMintRequest(actor: KeyMinter, input: MintApiKeyInput, now: number): { expiresAt: number } {
  if (RESERVED_ROLES.has(input.role.toLowerCase())) throw new ReservedRole(input.role)
  if (!isRole(input.role)) throw invalidField('/role', 'must be one of owner, admin, member')
  if (actor.isPlatformAdmin !== true && !roleAtLeast(actor.role, input.role)) throw new RoleAboveCaller()
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
  /** The one site the key reaches (issue 30); null: every site. */
  siteCode: string | null
  /** The client networks, canonical CIDR blocks joined by commas; null: any address. */
  networks: string | null
}

export interface ApiKeysDeps {
  handle: DatabaseHandle
  clock: Clock
  keySecret: Buffer | undefined
  /**
   * The sites, to check a site-restricted key's site in the mint's transaction, held against a concurrent delete (the
   * sites service satisfies it); absent: such a mint is a TypeError.
   */
  sites?: { exists(trx: Db, orgId: OrgId, code: string): Promise<boolean> }
}

export function createApiKeysService(deps: ApiKeysDeps) {
  const { handle, clock } = deps
  const db = handle.db
  if (deps.keySecret && deps.keySecret.length < 32) throw new TypeError('the verifier secret must hold at least 32 bytes')
  const nextKeyId = keyIdGenerator()

  // In the mint's transaction, the site's row held: a delete of the site either came first (the mint refused) or waits
  // for the mint and then revokes the key with the site's others (apiKeysSiteDependent).
  async function requireSite(trx: Db, orgId: OrgId, code: string): Promise<void> {
    if (!deps.sites) throw new TypeError('minting a site-restricted key needs the sites')
    if (!(await deps.sites.exists(trx, orgId, code))) throw invalidField('/siteId', 'names no site of this organisation')
  }
  return {
    /** Mints a key for the caller's organisation; the plaintext is in the result and nowhere else. */
    async mint(orgId: OrgId, actor: KeyMinter, input: MintApiKeyInput): Promise<MintedApiKey> {
      if (!deps.keySecret) throw new TypeError('minting a key needs the verifier secret')
      const now = clock.now()
      const { expiresAt } = checkMintRequest(actor, input, now)
      const networks = input.networks === undefined ? null : checkNetworks(input.networks)
      if (actor.kind === 'apiKey') {
        // Revoked since it was verified (another request, another process): a credential no longer valid, not one
        // without networks to check.
        const caller = await findActiveApiKey(db, orgId, actor.subject)
        if (caller === undefined) throw new Unauthorized()
        if (caller.networks !== null) checkNetworksWithin(caller.networks, input.networks)
      }
      const siteId = input.siteId ?? null
      const plaintext = generatePlaintext()
      const keyId = nextKeyId(now)
      await db.transaction().execute(async (trx) => {
        if (siteId !== null) await requireSite(trx, orgId, siteId)
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
          site_code: siteId,
          networks: networks === null ? null : networks.join(','),
        })
        const restriction = { ...(siteId === null ? {} : { siteId }), ...(networks === null ? {} : { networks }) }
        await recordAudit(trx, clock, orgId, actor, { action: 'api_key.minted', target: keyId, detail: { role: input.role, name: input.name, ...restriction } })
        // Every process drops what it remembered of unknown keys (auth/api-key-validator.ts).
        await handle.announceInvalidation(trx)
      })
      handle.invalidateLocally()
      return {
        keyId,
        keyPrefix: plaintext.slice(0, KEY_PREFIX_LENGTH),
        plaintext,
        role: input.role,
        name: input.name,
        expiresAt: iso(expiresAt),
        createdAt: iso(now),
        siteId,
        networks,
      }
    },

    /** Non-revoked keys of the organisation, newest created first. */
    async list(orgId: OrgId): Promise<ApiKey[]> {
      const rows = await listActiveApiKeys(db, orgId)
      return rows.map(toApiKey)
    },

    /** One non-revoked key of the organisation; absent, foreign or revoked: NotFound. */
    async read(orgId: OrgId, keyId: string): Promise<ApiKey> {
      const row = await findActiveApiKey(db, orgId, storedKeyId(keyId))
      if (!row) throw new NotFound()
      return toApiKey(row)
    },

    /** Revokes at once in every process sharing the database; absent, foreign or revoked: NotFound. */
    async revoke(orgId: OrgId, actor: Actor, given: string, reason: string | null): Promise<void> {
      const keyId = storedKeyId(given)
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

    /** Whether a plaintext has a key's shape (spec 2.1): a malformed one is worth no hash and no query. */
    isWellFormed(plaintext: string): boolean {
      return KEY_PATTERN.test(plaintext)
    },

    /** The verifier a well-formed plaintext is stored under. */
    verifierOf(plaintext: string): string {
      if (!deps.keySecret) throw new TypeError('checking a key needs the verifier secret')
      return verifierOf(deps.keySecret, plaintext)
    },

    /** The non-revoked key stored under a verifier (compared in constant time) whose role is known; undefined otherwise. */
    async activeKeyByVerifier(orgId: OrgId, verifier: string): Promise<ActiveApiKey | undefined> {
      const row = await findActiveKeyByVerifier(db, orgId, verifier)
      if (!row || !verifiersEqual(row.verifier, verifier) || !isRole(row.role)) return undefined
      return { orgId: row.org_id as OrgId, keyId: row.id, role: row.role, expiresAt: row.expires_at, siteCode: row.site_code, networks: row.networks }
    },

    /** Records lastUsedAt for a batch of uses in one transaction (each names its organisation); never moves it back. */
    async markUsed(uses: ReadonlyArray<{ orgId: string; keyId: string; at: number }>): Promise<void> {
      await db.transaction().execute((trx) => markKeysUsed(trx, uses))
    },

    /** The name and restriction of a key that still authenticates, for GET /api/me. */
    async describe(orgId: OrgId, keyId: string): Promise<{ name: string; siteId: string | null; networks: string[] | null } | undefined> {
      const row = await findActiveApiKey(db, orgId, keyId)
      return row && { name: row.name, siteId: row.site_code, networks: shownNetworks(row.networks) }
    },
  }
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>
