import type { Clock } from '../clock.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import type { OrgId } from '../ids.ts'
import { KEY_PATTERN, verifierOf, verifiersEqual } from '../modules/api-keys/plaintext.ts'
import { findActiveKeyByVerifier } from '../modules/api-keys/store.ts'
import { isRole, type Principal } from './principal.ts'

interface VerifiedKey {
  principal: Principal
  expiresAt: number
}

const MAX_CACHED_KEYS = 50_000

export interface ApiKeyValidatorDeps {
  handle: DatabaseHandle
  clock: Clock
  keySecret: Buffer
  /** Called for every successful authentication; records lastUsedAt off the request path. */
  onUse: (orgId: OrgId, keyId: string, at: number) => void
}

/**
 * Returns `(plaintext) => Principal | undefined`. Malformed keys cost no query; verified keys are cached by
 * verifier and the cache is dropped whenever the database handle's invalidation generation moves (a revoke
 * or an org removal in any process). Expiry is checked against the clock on every call, cached or not.
 */
export function createApiKeyValidator(deps: ApiKeyValidatorDeps) {
  if (deps.keySecret.length < 32) throw new TypeError('the verifier secret must hold at least 32 bytes')
  const cache = new Map<string, VerifiedKey>()
  let cachedGeneration = deps.handle.generation()

  /**
   * `orgId`: the organisation the request's host names (the key is looked up within it: one shard on Citus).
   * `generation`: the handle's invalidation generation as the caller read it (once per request, http/auth.ts).
   */
  return async function validateApiKey(plaintext: string, orgId: OrgId, generation = deps.handle.generation()): Promise<Principal | undefined> {
    if (!KEY_PATTERN.test(plaintext)) return undefined
    const verifier = verifierOf(deps.keySecret, plaintext)
    if (generation !== cachedGeneration) {
      cache.clear()
      cachedGeneration = generation
    }
    let hit = cache.get(verifier)
    if (!hit) {
      const row = await findActiveKeyByVerifier(deps.handle.db, orgId, verifier)
      if (!row || !verifiersEqual(row.verifier, verifier) || !isRole(row.role)) return undefined
      hit = {
        principal: { orgId: row.org_id as OrgId, kind: 'apiKey', role: row.role, subject: row.id, isPlatformAdmin: false },
        expiresAt: row.expires_at,
      }
      // A revoke that committed while we were reading must not be undone by caching the old row.
      if (deps.handle.generation() === generation) {
        if (cache.size >= MAX_CACHED_KEYS) cache.clear()
        cache.set(verifier, hit)
      }
    }
    const now = deps.clock.now()
    if (now >= hit.expiresAt) return undefined
    deps.onUse(hit.principal.orgId, hit.principal.subject, now)
    return hit.principal
  }
}

export type ApiKeyValidator = ReturnType<typeof createApiKeyValidator>
