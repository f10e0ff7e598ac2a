import type { FastifyBaseLogger } from 'fastify'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { BearerValidator } from '../../http/auth.ts'
import type { OrgId } from '../../ids.ts'
import type { Access, Org, Principal } from '../../identity.ts'
import type { Memberships, PlatformAdminList } from './accounts.ts'
import type { OidcIdentity } from './bearer.ts'
import { InvalidBearerToken } from './errors.ts'
import type { RelyingParty } from './relying-party.ts'

interface CachedAccess {
  readonly access: Access
  readonly isPlatformAdmin: boolean
  /** The principal last built from this access (its subject: the token's `sub`), reused while the access is cached. */
  principal?: Principal
}

const MAX_CACHED = 50_000

/**
 * Spec 5 rule 5: the provider's token says who the caller is; the membership table says what it may do.
 * A token for another organisation than the host's is the uniform 401 (undefined), whatever the caller.
 * An unknown account gets a pending membership recorded and a pending principal (403 everywhere); a platform
 * admin passes every policy. Access is cached per (org, oid) and dropped whenever the database handle's
 * invalidation generation moves (an approval, a revocation or a platform-admin change in any process).
 */
export function createOidcPrincipalValidator(deps: {
  relyingParty: Pick<RelyingParty, 'metadata' | 'validateBearer'>
  members: Pick<Memberships, 'accessOf' | 'accessForBearer'>
  platformAdmins: PlatformAdminList
  handle: DatabaseHandle
  log: FastifyBaseLogger
}): BearerValidator {
  const { relyingParty, members, platformAdmins, handle, log } = deps
  const issuer = relyingParty.metadata.issuer
  const cache = new Map<string, CachedAccess>()
  let cachedGeneration = handle.generation()

  /** The access of (org, oid) if cached under the current invalidation generation. */
  function cachedAccess(key: string): CachedAccess | undefined {
    const generation = handle.generation()
    if (generation !== cachedGeneration) {
      cache.clear()
      cachedGeneration = generation
    }
    return cache.get(key)
  }

  /** The access of (org, oid): at once from the cache, else a promise of the lookup (remembered when no change came meanwhile). */
  function accessOf(orgId: OrgId, claims: { oid: string; email?: string; name?: string }): CachedAccess | Promise<CachedAccess> {
    const key = `${orgId}\u0000${claims.oid}`
    return cachedAccess(key) ?? lookUp(orgId, claims, key, cachedGeneration)
  }

  async function lookUp(orgId: OrgId, claims: { oid: string; email?: string; name?: string }, key: string, generation: number): Promise<CachedAccess> {
    const isPlatformAdmin = await platformAdmins.isPlatformAdmin(claims.oid)
    // A platform admin acting at a host is not asking to join it: no membership request is recorded.
    const access: Access = isPlatformAdmin
      ? ((await members.accessOf(orgId, claims.oid)) ?? { status: 'pending' })
      : await members.accessForBearer(orgId, claims)
    const value = { access, isPlatformAdmin }
    if (handle.generation() === generation) {
      if (cache.size >= MAX_CACHED) cache.clear()
      cache.set(key, value)
    }
    return value
  }

  function refused(error: unknown): undefined {
    // The reason is for the operator; the caller gets the one uniform 401.
    if (error instanceof InvalidBearerToken) log.debug({ event: 'auth.bearer_rejected', reason: error.reason, claim: error.claim }, 'bearer token rejected')
    else log.warn({ err: error }, 'bearer validation failed unexpectedly')
    return undefined
  }

  function principalOf(org: Org, identity: OidcIdentity, cached: CachedAccess): Principal {
    if (cached.principal?.subject === identity.sub) return cached.principal
    const { access, isPlatformAdmin } = cached
    const base = { orgId: org.id, kind: 'user' as const, subject: identity.sub, account: identity.oid, isPlatformAdmin }
    // A platform admin without a membership acts with full authority (it passes every policy anyway);
    // anyone else is pending or revoked: authenticated, refused by every policy.
    cached.principal =
      access.status === 'active' ? { ...base, role: access.role } : isPlatformAdmin ? { ...base, role: 'owner' } : { ...base, role: 'member', isPending: true }
    return cached.principal
  }

  function ofIdentity(org: Org, identity: OidcIdentity): Principal | undefined | Promise<Principal | undefined> {
    if (identity.orgSlug !== org.slug) {
      log.debug({ event: 'auth.bearer_rejected', reason: 'org_slug differs from the host organisation' }, 'bearer token rejected')
      return undefined
    }
    const access = accessOf(org.id, identity)
    return access instanceof Promise ? access.then((a) => principalOf(org, identity, a)) : principalOf(org, identity, access)
  }

  return {
    accepts: (iss) => iss === issuer,
    // The selector's shortcut (issue 29): a remembered token of a cached access, without the issuer peek.
    remembered(token: string, org: Org): Principal | undefined {
      const identity = relyingParty.validateBearer.remembered(token)
      if (identity === undefined || identity.orgSlug !== org.slug) return undefined
      const cached = cachedAccess(`${org.id}\u0000${identity.oid}`)
      return cached === undefined ? undefined : principalOf(org, identity, cached)
    },
    // Synchronous for a remembered token of a cached access (issue 29: no promise on the request path, as the API
    // key's); a lookup's promise otherwise.
    validate(token: string, org: Org): Principal | undefined | Promise<Principal | undefined> {
      const identity = relyingParty.validateBearer(token)
      if (identity instanceof Promise) return identity.then((found) => ofIdentity(org, found), refused)
      return ofIdentity(org, identity)
    },
  }
}
