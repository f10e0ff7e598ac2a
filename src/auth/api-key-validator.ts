import type { Clock } from '../clock.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import type { OrgId } from '../ids.ts'
import type { Principal, Role } from '../identity.ts'
import { networkMatcher } from './client-networks.ts'
import { credentialDigest } from './credential-digest.ts'

/** The API keys as the selector reads them: the api-keys module's service satisfies it, app.ts passes it in. */
export interface ApiKeyLookup {
  /** Whether a plaintext has the shape of a key (spec 2.1); a malformed one costs no hash and no query. */
  isWellFormed(plaintext: string): boolean
  /** The verifier a well-formed plaintext is stored under (a keyed hash under the verifier secret). */
  verifierOf(plaintext: string): string
  /** The organisation's non-revoked key stored under a verifier, compared in constant time, whose role is known. */
  activeKeyByVerifier(
    orgId: OrgId,
    verifier: string,
  ): Promise<{ orgId: OrgId; keyId: string; role: Role; expiresAt: number; siteCode: string | null; networks: string | null } | undefined>
}

interface VerifiedKey {
  principal: Principal
  expiresAt: number
  /** Absent: any client address. */
  fromNetwork?: (ip: string) => boolean
}

const MAX_CACHED_KEYS = 50_000

export interface ApiKeyValidatorDeps {
  handle: DatabaseHandle
  clock: Clock
  keys: ApiKeyLookup
  /** Called for every successful authentication; records lastUsedAt off the request path. */
  onUse: (orgId: OrgId, keyId: string, at: number) => void
}

/**
 * Returns `(plaintext) => Principal | undefined`: at once for a remembered key, a promise only when it looks one up
 * (issue 29: no promise on the hot path). Malformed keys cost no query; verified keys are remembered, and so are the
 * organisation's unknown ones (issue 29: a refused key is not looked up again), and both are dropped whenever the
 * database handle's invalidation generation moves (a mint, a revoke, an import or an org removal in any process).
 * Expiry is checked against the clock on every call, cached or not.
 * Both are remembered by the plaintext's digest (credential-digest.ts); the verifier's HMAC is computed only to look
 * a key up.
 */
export function createApiKeyValidator(deps: ApiKeyValidatorDeps) {
  const cache = new Map<string, VerifiedKey>()
  /** `${orgId} ${digest}` of well-formed keys the organisation does not hold (or holds revoked). */
  const unknown = new Set<string>()
  let cachedGeneration = deps.handle.generation()

  /**
   * `orgId`: the organisation the request's host names (the key is looked up within it: one shard on Citus).
   * `clientIp`: the request's client address (behind a trusted proxy, the forwarded one): a key restricted to client
   * networks fails, like an unknown key, from any other address.
   * `generation`: the handle's invalidation generation as the caller read it (once per request, http/auth.ts).
   */
  return function validateApiKey(
    plaintext: string,
    orgId: OrgId,
    clientIp: string,
    generation = deps.handle.generation(),
  ): Principal | undefined | Promise<Principal | undefined> {
    if (!deps.keys.isWellFormed(plaintext)) return undefined
    const digest = credentialDigest(plaintext)
    if (generation !== cachedGeneration) {
      cache.clear()
      unknown.clear()
      cachedGeneration = generation
    }
    const hit = cache.get(digest)
    if (hit) return admit(hit, clientIp)
    const absent = `${orgId} ${digest}`
    if (unknown.has(absent)) return undefined
    return lookUp(orgId, plaintext, digest, absent, generation).then((found) => found && admit(found, clientIp))
  }

  async function lookUp(orgId: OrgId, plaintext: string, digest: string, absent: string, generation: number): Promise<VerifiedKey | undefined> {
    const key = await deps.keys.activeKeyByVerifier(orgId, deps.keys.verifierOf(plaintext))
    if (!key) {
      // As for a found key: a mint that committed while we were reading must not be hidden by remembering its absence.
      if (deps.handle.generation() === generation) {
        if (unknown.size >= MAX_CACHED_KEYS) unknown.clear()
        unknown.add(absent)
      }
      return undefined
    }
    const principal: Principal = {
      orgId: key.orgId,
      kind: 'apiKey',
      role: key.role,
      subject: key.keyId,
      isPlatformAdmin: false,
      ...(key.siteCode === null ? {} : { site: key.siteCode }),
      ...(key.networks === null ? {} : { networkBound: true }),
    }
    const found: VerifiedKey = {
      principal,
      expiresAt: key.expiresAt,
      ...(key.networks === null ? {} : { fromNetwork: networkMatcher(key.networks) }),
    }
    // A revoke that committed while we were reading must not be undone by caching the old row.
    if (deps.handle.generation() === generation) {
      if (cache.size >= MAX_CACHED_KEYS) cache.clear()
      cache.set(digest, found)
    }
    return found
  }

  /** Expiry against the clock and the client networks, on every call, cached or not. */
  function admit(key: VerifiedKey, clientIp: string): Principal | undefined {
    const now = deps.clock.now()
    if (now >= key.expiresAt) return undefined
    if (key.fromNetwork && !key.fromNetwork(clientIp)) return undefined
    deps.onUse(key.principal.orgId, key.principal.subject, now)
    return key.principal
  }
}

export type ApiKeyValidator = ReturnType<typeof createApiKeyValidator>
