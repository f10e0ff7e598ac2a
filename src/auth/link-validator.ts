import type { DatabaseHandle } from '../db/connect.ts'
import type { OrgId } from '../ids.ts'
import type { Principal } from '../identity.ts'
import { credentialDigest } from './credential-digest.ts'

/** The link credentials as the selector reads them: the site-servers service satisfies it, app.ts passes it in. */
export interface LinkLookup {
  /** Whether a credential has the shape of a link credential (`slk_…`); a malformed one costs no hash and no query. */
  isWellFormed(credential: string): boolean
  /** The verifier a well-formed link credential is stored under (a keyed hash under the verifier secret). */
  verifierOf(credential: string): string
  /** The organisation's enrolled, non-revoked site server stored under a verifier (compared in constant time). */
  activeServerByVerifier(orgId: OrgId, verifier: string): Promise<{ orgId: OrgId; serverId: string; sites: readonly string[] } | undefined>
}

const MAX_CACHED_CREDENTIALS = 10_000

/** Whether a bearer token is a link credential, so the selector routes it here rather than to a JWT validator. */
export function isLinkCredential(token: string): boolean {
  return token.startsWith('slk_')
}

/**
 * Returns `(credential, orgId, generation) => Principal | undefined`: a principal of kind `link` whose subject is the
 * site server id and whose `sites` are its sites. Malformed credentials cost no query; verified ones are remembered by
 * the credential's digest (credential-digest.ts) and forgotten whenever the database handle's invalidation generation
 * moves (a revoke or a re-enrolment in any process: the site-servers service announces it in the same transaction).
 */
export function createLinkValidator(deps: { handle: DatabaseHandle; links: LinkLookup }) {
  const cache = new Map<string, Principal>()
  let cachedGeneration = deps.handle.generation()

  return async function validateLink(credential: string, orgId: OrgId, generation = deps.handle.generation()): Promise<Principal | undefined> {
    if (!deps.links.isWellFormed(credential)) return undefined
    const digest = credentialDigest(credential)
    if (generation !== cachedGeneration) {
      cache.clear()
      cachedGeneration = generation
    }
    const hit = cache.get(digest)
    if (hit) return hit.orgId === orgId ? hit : undefined
    const server = await deps.links.activeServerByVerifier(orgId, deps.links.verifierOf(credential))
    if (!server) return undefined
    const principal: Principal = Object.freeze({
      orgId: server.orgId,
      kind: 'link',
      // A placeholder: a link principal passes the `link` policy only (http/auth.ts), never a role policy.
      role: 'member',
      subject: server.serverId,
      isPlatformAdmin: false,
      sites: Object.freeze([...server.sites]),
    })
    // A revoke that committed while we were reading must not be undone by caching the old row.
    if (deps.handle.generation() === generation) {
      if (cache.size >= MAX_CACHED_CREDENTIALS) cache.clear()
      cache.set(digest, principal)
    }
    return principal
  }
}

export type LinkValidator = ReturnType<typeof createLinkValidator>
