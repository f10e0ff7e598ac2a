import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ApiKeyValidator } from '../auth/api-key-validator.ts'
import { isLinkCredential, type LinkValidator } from '../auth/link-validator.ts'
import { roleAtLeast, type Principal, type Role, type Org } from '../identity.ts'
import type { Config } from '../config/schema.ts'
import { runInRequestScope } from '../db/tenant-scope.ts'
import { Forbidden, NotFound, UNAUTHORIZED_DETAIL } from '../errors/domain-error.ts'
import { constantProblem, sendProblem } from './problem.ts'
import type { createRateLimiter } from './rate-limit.ts'
import type { Tenancy } from './tenancy.ts'

/**
 * Every route names its policy in `config.policy`; a route without one fails at start-up (closed by default).
 * - `public`: no credential (health, readiness, OpenAPI, problem pages, sign-in endpoints, the local key set).
 * - `member` | `admin` | `owner`: the caller's role — organisation role in cloud mode, site role in site mode —
 *   must be at least this. Platform admins pass every role policy.
 * - `platformAdmin`: platform admins only.
 * - `orgAdmin`: organisation administration (spec 4.5): a platform admin, or role ≥ admin and never a site-PIN principal.
 * - `link`: the fleet link's own endpoints (issue 26): a site server's link credential only. A link principal fails
 *   every other policy, and no other principal (a platform admin's included) passes this one.
 */
export type Policy = 'public' | 'member' | 'admin' | 'owner' | 'platformAdmin' | 'orgAdmin' | 'link'

/** One registered route and its declared policy (`app.routeTable`, for the hardening tests and audits). */
export interface RouteEntry {
  method: string
  url: string
  policy: Policy | undefined
  /** The path parameter naming the route's site (site-restricted keys reach only theirs). */
  siteParam: string | undefined
  /** Refused to a key restricted to client networks (config.grantsAccess). */
  grantsAccess: boolean
}

declare module 'fastify' {
  interface FastifyContextConfig {
    policy?: Policy
    /** Set from the path (`/api/sites/:siteId/…`): the parameter naming the route's site, for site-restricted keys. */
    siteParam?: string
    /**
     * The route gives another account or machine access of its own (approves a member, creates a site user or sets
     * its role or PIN, registers a site server or issues its enrolment code, imports a tenant package with its
     * memberships and keys): refused to a key restricted to client networks, whose holder would otherwise leave its
     * networks with a credential they do not bind (the OpenAPI document says so on each such operation).
     */
    grantsAccess?: true
  }
  interface FastifyInstance {
    routeTable: RouteEntry[]
  }
  interface FastifyRequest {
    principal: Principal
    org: Org
  }
}

/** A bearer validator claims the tokens of its issuer; the selector routes by `iss`. */
export interface BearerValidator {
  accepts(issuer: string): boolean
  /** A principal at once when its caches answer (no promise on the request path), else a promise. */
  validate(token: string, org: Org): Principal | undefined | Promise<Principal | undefined>
  /**
   * The principal of a token this validator verified before, at once, if it would pass again unchanged (its verdict
   * and the caller's access both cached); else undefined, and the selector peeks at the issuer and validates.
   */
  remembered?(token: string, org: Org): Principal | undefined
}

export interface AuthDeps {
  config: Config
  tenancy: Tenancy
  /** The database handle's invalidation generation (db/connect.ts); read once per request. */
  generation: () => number
  validateApiKey: ApiKeyValidator
  /** The fleet link's credentials (`Bearer slk_…`); absent: such a bearer gets the uniform 401. */
  validateLink?: LinkValidator
  bearerValidators: BearerValidator[]
  peekIssuer: (token: string) => string | undefined
  rateLimiter: ReturnType<typeof createRateLimiter>
  /**
   * The sign-in endpoints (/auth/*, public) and the fleet link's enrolment (its one-time code authenticates): per
   * client address, so that PINs, sign-ins and enrolment codes cannot be hammered.
   */
  authRateLimiter?: ReturnType<typeof createRateLimiter>
  /** The database enforces the tenant scope (PostgreSQL row-level security); SQLite has nothing to carry it to. */
  rowLevelSecurity: boolean
}

export function satisfiesPolicy(principal: Principal, policy: Exclude<Policy, 'public'>): boolean {
  // Before the platform-admin pass: the link is a machine's credential for its own endpoints, and only those.
  if (policy === 'link' || principal.kind === 'link') return policy === 'link' && principal.kind === 'link'
  if (principal.isPlatformAdmin) return true
  if (principal.isPending === true) return false
  if (policy === 'platformAdmin') return false
  if (policy === 'orgAdmin') return principal.kind !== 'sitePin' && roleAtLeast(principal.role, 'admin')
  return roleAtLeast(principal.role, policy satisfies Role)
}

export function installAuth(app: FastifyInstance, deps: AuthDeps): void {
  app.decorateRequest('principal', null as unknown as Principal)
  app.decorateRequest('org', null as unknown as Org)

  const routeTable: RouteEntry[] = []
  app.decorate('routeTable', routeTable)
  app.addHook('onRoute', (route) => {
    if (!route.config?.policy) {
      throw new TypeError(`route ${String(route.method)} ${route.url} declares no policy (config.policy); routes are closed by default`)
    }
    const siteParam = SITE_SCOPED_PATH.exec(route.url)?.[1]
    const grantsAccess = route.config.grantsAccess === true
    for (const method of [route.method].flat()) routeTable.push({ method, url: route.url, policy: route.config.policy, siteParam, grantsAccess })
    if (siteParam !== undefined) route.config = { ...route.config, siteParam }
  })

  // Row-level security (db/tenant-scope.ts): every request runs in a scope cell of its own, empty (no tenant rows)
  // until the tenancy layer resolves the host. Callback style, so that the hooks and handler after it run inside.
  // Not on SQLite, which enforces no scope: the cell would cost every request for nothing.
  if (deps.rowLevelSecurity)
    app.addHook('onRequest', (_request, _reply, done) => {
      runInRequestScope(done)
    })

  // Callback style, and synchronous while the tenancy and the credential come from their caches (issue 29): no
  // promise on a remembered key's request; a lookup's promise calls `done` when it settles. A request answered here
  // (401, 429) does not call `done`: its answer may still be under way, and the hooks after this one must not run.
  app.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions // a getter that builds its object on every read
    if (deps.authRateLimiter && route.url !== undefined && isSignInPath(route.url)) {
      const wait = deps.authRateLimiter.hit(`ip:${request.ip}`)
      if (wait > 0) {
        reply.header('retry-after', String(wait))
        return void sendProblem(reply, request, 'RateLimited', 'Too many sign-in requests from this address; see Retry-After.')
      }
    }
    if (route.config.policy === undefined || route.config.policy === 'public') return done() // undefined: the not-found handler
    const retryAfter = deps.rateLimiter.hit(rateBucket(request))
    if (retryAfter > 0) {
      reply.header('retry-after', String(retryAfter))
      return void sendProblem(reply, request, 'RateLimited', 'Too many requests for this credential; see Retry-After.')
    }
    const generation = deps.generation()
    // No closure made per request (issue 29, sixth pass): the steps are module functions given what they need.
    const org = deps.tenancy.resolve(request.hostname, generation)
    const decided =
      org instanceof Promise
        ? org.then((found) => decide(request, reply, route, found, deps, generation))
        : decide(request, reply, route, org, deps, generation)
    if (decided instanceof Promise) decided.then((goesOn) => goesOn && done(), done)
    else if (decided) done()
  })
}

type RouteOptions = FastifyRequest['routeOptions']

const unauthorized = constantProblem('Unauthorized', UNAUTHORIZED_DETAIL)

/** Whether the request goes on: its credential's principal, at once from the caches, or once its lookup settles. */
function decide(
  request: FastifyRequest,
  reply: FastifyReply,
  route: RouteOptions,
  org: Org | undefined,
  deps: AuthDeps,
  generation: number,
): boolean | Promise<boolean> {
  if (!org) return admit(request, reply, route, org, undefined)
  const principal = authenticate(request, org, deps, generation)
  return principal instanceof Promise ? principal.then((found) => admit(request, reply, route, org, found)) : admit(request, reply, route, org, principal)
}

/** Whether the request goes on (false: answered with the uniform 401); throws Forbidden or NotFound past its policy. */
function admit(request: FastifyRequest, reply: FastifyReply, route: RouteOptions, org: Org | undefined, principal: Principal | undefined): boolean {
  // Spec 5 rule 3 and 1 (tenancy): one uniform 401 whatever failed, including a credential of another org.
  // Answered here rather than thrown: no Error (stack capture) and no error-handler round on the hottest refusal.
  if (!org || !principal || principal.orgId !== org.id) {
    unauthorized(reply, request)
    return false
  }
  request.org = org
  request.principal = principal
  const { policy, siteParam, grantsAccess } = route.config
  if (!satisfiesPolicy(principal, policy as Exclude<Policy, 'public'>)) throw new Forbidden()
  if (principal.site !== undefined) refuseOutsideSite(request, principal.site, siteParam, route.url)
  if (grantsAccess && principal.networkBound) throw new Forbidden(NETWORK_BOUND_GRANT)
  return true
}

const NETWORK_BOUND_GRANT =
  'This API key is restricted to client networks: it gives no access that works from elsewhere (members, site users, their roles and PINs, site servers, tenant packages), and mints keys only within its networks. Use a credential without that restriction.'

/** A site-scoped route: its path starts with the site (`/api/sites/:siteId/…`, `/api/sites/:code`). */
const SITE_SCOPED_PATH = /^\/api\/sites\/:([A-Za-z]+)(?:\/|$)/
/** The routes a site-restricted key reaches besides its site's: who am I. */
const ANY_SITE_PATHS = new Set(['/api/me', '/api/me/'])

/**
 * Issue 30: a key restricted to one site reaches that site's routes only. Another site answers exactly as an unknown
 * one (404), so a gateway's key cannot even tell which sites exist; a route of no site (the organisation's keys,
 * members, imports by body, the site list) is refused (403).
 */
function refuseOutsideSite(request: FastifyRequest, site: string, siteParam: string | undefined, url: string | undefined): void {
  if (siteParam === undefined) {
    if (url !== undefined && ANY_SITE_PATHS.has(url)) return
    throw new Forbidden('This API key is restricted to one site: it reaches only the routes of that site (/api/sites/{siteId}/…).')
  }
  if ((request.params as Record<string, string | undefined>)[siteParam] !== site) throw new NotFound()
}

function authenticate(request: FastifyRequest, org: Org, deps: AuthDeps, generation: number): Principal | undefined | Promise<Principal | undefined> {
  const apiKey = request.headers['x-api-key']
  const authorization = request.headers.authorization
  if (apiKey !== undefined) {
    // Spec 5 rule 1: the API key wins; never a 400 for sending both.
    if (authorization !== undefined) request.log.warn({ event: 'auth.both_credentials' }, 'X-Api-Key and Authorization both present; using the API key')
    return typeof apiKey === 'string' ? deps.validateApiKey(apiKey, org.id, request.ip, generation) : undefined
  }
  if (authorization === undefined) return undefined
  // RFC 9110 §11.1 and §11.4: the scheme is case-insensitive and one or more spaces precede the token68.
  const match = /^bearer +([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization)
  if (!match) return undefined
  const token = match[1]!
  // A link credential is not a JWT: routed by its prefix before the issuer peek.
  if (isLinkCredential(token)) return deps.validateLink?.(token, org.id, generation)
  // Issue 29: a remembered token of a cached access skips the issuer peek (an unverified decode) altogether.
  for (const validator of deps.bearerValidators) {
    const principal = validator.remembered?.(token, org)
    if (principal !== undefined) return principal
  }
  const issuer = deps.peekIssuer(token)
  const validator = issuer === undefined ? undefined : deps.bearerValidators.find((v) => v.accepts(issuer))
  return validator?.validate(token, org)
}

/** The public paths whose body carries a secret to guess: limited per client address (`authRateLimiter`). */
function isSignInPath(url: string): boolean {
  return url.startsWith('/auth/') || url === '/api/link/enrol'
}

/**
 * A credential's rate bucket is named by at most its last 64 characters (a token's signature, a key's secret part),
 * copied out of the header: a hostile client sending distinct 16 KiB headers would otherwise make the limiter hold
 * up to 100 000 of them a minute (1.6 GB), a slice keeping its whole header alive.
 */
const BUCKET_CREDENTIAL_CHARS = 64

export function rateBucket(request: Pick<FastifyRequest, 'headers' | 'ip'>): string {
  const credential = request.headers['x-api-key'] ?? request.headers.authorization
  if (typeof credential !== 'string') return `ip:${request.ip}`
  if (credential.length <= BUCKET_CREDENTIAL_CHARS) return `c:${credential}`
  return `c:${Buffer.from(credential.slice(-BUCKET_CREDENTIAL_CHARS), 'latin1').toString('latin1')}`
}
