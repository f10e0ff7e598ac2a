// Issue 14, function-level authorisation (OWASP API5): a role × route matrix generated from the route table.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { roleAtLeast, type Role, type Org } from '../../src/identity.ts'
import type { RouteEntry } from '../../src/http/auth.ts'
import { harness, type Harness } from '../harness.ts'
import { identityHarness, startSharedProvider, type SharedProvider } from '../oidc/identity-harness.ts'
import { CHEAP_PINS, signedIn } from '../site/support.ts'
import { CONSOLE_PATHS } from '../../web/src/paths.ts'
import { NO_RATE_LIMIT } from './support.ts'
import { LINK_HEADERS, seedCloudLink } from '../support/fleet-link.ts'

/**
 * The routes anyone may call without a credential, and why. A `public` route outside this list fails the test:
 * opening a route is a decision made here, in review, not by a typo in a route file.
 */
const PUBLIC_ALLOW_LIST: Readonly<Record<string, string>> = {
  'GET /healthz': 'liveness probe',
  'GET /readyz': 'readiness probe',
  'GET /openapi.json': 'the API description',
  'GET /problems/:code': 'the pages that problem `type` URIs point at',
  'POST /auth/site/login': 'site-PIN sign-in (site server)',
  'POST /auth/site/pin': 'site-PIN change with the current PIN (site server)',
  'POST /auth/site/refresh': 'site session refresh with a refresh token (site server)',
  'POST /auth/site/logout': 'site session sign-out with a refresh token (site server)',
  'GET /.well-known/jwks.json': "the site server's public signing keys",
  'GET /auth/login': 'browser sign-in start (cloud, OIDC)',
  'GET /auth/callback': 'browser sign-in redirect target (cloud, OIDC)',
  'POST /auth/token': 'session cookie to access token (cloud, OIDC)',
  'POST /auth/logout': 'browser sign-out (cloud, OIDC)',
  'GET /assets/:file': "the web console's scripts and styles (no data)",
  'POST /api/link/enrol': "a site server's enrolment: its one-time code authenticates (cloud, fleet link)",
  // The web console's pages: one HTML shell that holds no data; its API calls are authorised like any other.
  ...Object.fromEntries(CONSOLE_PATHS.map((path) => [`GET ${path}`, "the web console's HTML shell (no data)"])),
}

/**
 * Public routes whose own credential is the browser session cookie (documented "Policy: the session cookie"):
 * none of the callers here carries one, so each gets the uniform 401, API keys and bearers included.
 */
const SESSION_COOKIE_ROUTES = new Set(['POST /auth/token'])

type Caller =
  | { name: string; kind: 'none' }
  | { name: string; kind: 'apiKey' | 'sitePin' | 'user'; role: Role; credential: { apiKey?: string; bearer?: string } }
  /** An owner API key restricted to the site `site` (issue 30), or to client networks the test's requests come from. */
  | { name: string; kind: 'siteKey'; role: 'owner'; site: string; credential: { apiKey: string } }
  | { name: string; kind: 'networkKey'; role: 'owner'; credential: { apiKey: string } }
  | { name: string; kind: 'platformAdmin' | 'pending'; credential: { bearer: string } }
  | { name: string; kind: 'link'; credential: { bearer: string } }

/**
 * What the documented policy (src/http/auth.ts, spec 4.5) says a caller gets before any handler runs. A restricted key
 * first passes its role's policy; then a site-restricted one reaches its site's routes only (another site: the 404 of
 * an unknown site; a route of no site but /api/me: 403), and one restricted to client networks no route that gives
 * access of its own (403).
 */
function expected(caller: Caller, entry: RouteEntry): 'allowed' | 401 | 403 | 404 {
  const { policy } = entry as { policy: string }
  const route = key(entry)
  if (SESSION_COOKIE_ROUTES.has(route)) return 401
  if (policy !== 'public' && (caller.kind === 'siteKey' || caller.kind === 'networkKey')) {
    const byRole = expected({ name: 'its role', kind: 'apiKey', role: caller.role, credential: caller.credential }, entry)
    if (byRole !== 'allowed') return byRole
    if (caller.kind === 'networkKey') return entry.grantsAccess ? 403 : 'allowed'
    if (entry.siteParam === undefined) return entry.url === '/api/me' ? 'allowed' : 403
    return 404 // the harmless request names a site other than the key's
  }
  if (policy === 'public') return 'allowed'
  if (caller.kind === 'none') return 401
  if (caller.kind === 'link') return policy === 'link' ? 'allowed' : 403 // a site server's credential: the link routes only
  if (policy === 'link') return 403 // a site server's link credential only (none of these callers), platform admins included
  if (caller.kind === 'platformAdmin') return 'allowed' // platform admins pass every policy
  if (!('role' in caller)) return 403 // a pending user: authenticated, awaiting approval, fails every policy
  if (policy === 'platformAdmin') return 403
  if (policy === 'orgAdmin') return caller.kind !== 'sitePin' && roleAtLeast(caller.role, 'admin') ? 'allowed' : 403
  return roleAtLeast(caller.role, policy as Role) ? 'allowed' : 403
}

const key = (r: RouteEntry) => `${r.method} ${r.url}`

/** An owner key restricted to a site made for it, and one restricted to the networks the test's requests come from. */
async function restrictedKeys(h: Harness, org: Org): Promise<Caller[]> {
  const owner = { org, apiKey: (await h.mintKey(org, 'owner')).plaintext }
  assert.equal((await h.inject(owner, { method: 'POST', url: '/api/sites', payload: { code: 'GW-SITE', name: 'Gateway site' } })).statusCode, 201)
  const mint = async (restriction: object) => {
    const expiresAt = new Date(h.clock.now() + 86_400_000).toISOString()
    const res = await h.inject(owner, { method: 'POST', url: '/api/admin/api-keys', payload: { role: 'owner', name: 'restricted', expiresAt, ...restriction } })
    assert.equal(res.statusCode, 201, res.body)
    return res.json().plaintext as string
  }
  return [
    { name: 'site-restricted owner API key', kind: 'siteKey', role: 'owner', site: 'GW-SITE', credential: { apiKey: await mint({ siteId: 'GW-SITE' }) } },
    { name: 'network-restricted owner API key', kind: 'networkKey', role: 'owner', credential: { apiKey: await mint({ networks: ['127.0.0.0/8', '::1'] }) } },
  ]
}

/**
 * A request that cannot change anything: path ids that name nothing (the organisation's own slug, so that
 * `{slug}` routes reach their handler) and, for a write, a JSON body with a property no schema allows.
 */
function harmless(route: RouteEntry, org: Org, origin: string) {
  const url = route.url.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => (name === 'slug' ? org.slug : 'no-such-id-4711'))
  const write = !['GET', 'HEAD', 'OPTIONS'].includes(route.method)
  // The host's own Origin, as a browser sends it: the cookie routes refuse a cross-site one (403) before any policy.
  const headers: Record<string, string> = { origin, ...(write ? { 'content-type': 'application/json' } : {}) }
  return { method: route.method as 'GET', url, headers, ...(write ? { payload: '{"hardeningProbe":true}' } : {}) }
}

async function matrix(h: Harness, org: Org, callers: Caller[], scheme = 'https') {
  const routes = h.app.routeTable.filter((r) => r.method !== 'OPTIONS')
  const mismatches: string[] = []
  let cells = 0
  for (const route of routes) {
    for (const caller of callers) {
      const want = expected(caller, route)
      const request = harmless(route, org, `${scheme}://${org.slug}.localhost`)
      // A site server sends the link's protocol and schema headers, so its requests reach the handlers.
      if (caller.kind === 'link') Object.assign(request.headers, LINK_HEADERS)
      const res: LightMyRequestResponse = await h.inject(caller.kind === 'none' ? undefined : { org, ...caller.credential }, {
        ...request,
        host: `${org.slug}.localhost`,
      })
      cells++
      const got = res.statusCode
      const ok = want === 'allowed' ? got !== 401 && got !== 403 : got === want && (want !== 404 || route.method === 'HEAD' || res.json().code === 'NotFound')
      if (!ok) mismatches.push(`${key(route)} as ${caller.name} (policy ${route.policy}): expected ${want}, got ${got} ${res.body.slice(0, 160)}`)
    }
  }
  return { routes: routes.length, cells, mismatches }
}

/** The number of method × path entries in the router itself (printRoutes), to prove the route table complete. */
function routerSize(h: Harness): number {
  return h.app
    .printRoutes({ commonPrefix: false })
    .split('\n')
    .reduce((n, line) => n + (/\(([A-Z, ]+)\)\s*$/.exec(line)?.[1]!.split(',').length ?? 0), 0)
}

function routeTableChecks(h: Harness) {
  const withoutPolicy = h.app.routeTable.filter((r) => r.policy === undefined).map(key)
  const publicOutsideList = h.app.routeTable.filter((r) => r.policy === 'public' && r.method !== 'HEAD' && !(key(r) in PUBLIC_ALLOW_LIST)).map(key)
  // Routes that the router serves but the onRoute hook never saw (registered before installAuth) would escape both checks.
  assert.equal(h.app.routeTable.length, routerSize(h), 'the route table holds every route the router serves')
  return { withoutPolicy, publicOutsideList }
}

let shared: SharedProvider
before(async () => {
  shared = await startSharedProvider({ slots: 4 })
})
after(() => shared.stop())

describe('sqlite: function-level authorisation (OWASP API5), a role × route matrix from the route table', () => {
  it("site server: no credential, member/admin/owner API keys, site- and network-restricted owner keys and member/admin/owner site-PIN principals get exactly what each route's declared policy says: 0 mismatches; 0 routes without a policy; every public route is on the allow-list", async (t) => {
    const h = await harness(t, 'sqlite', { ...NO_RATE_LIMIT, ...CHEAP_PINS })
    const org = await h.createOrg()
    const callers: Caller[] = [{ name: 'no credential', kind: 'none' }]
    for (const role of ['member', 'admin', 'owner'] as const) {
      callers.push({ name: `${role} API key`, kind: 'apiKey', role, credential: { apiKey: (await h.mintKey(org, role)).plaintext } })
      callers.push({ name: `${role} site-PIN user`, kind: 'sitePin', role, credential: { bearer: (await signedIn(h, org, role)).accessToken } })
    }
    callers.push(...(await restrictedKeys(h, org)))
    const checks = routeTableChecks(h)
    const { routes, cells, mismatches } = await matrix(h, org, callers)
    console.log(
      `# hardening authorisation (site server): ${routes} routes x ${callers.length} callers = ${cells} cells, ${mismatches.length} mismatches, ${checks.withoutPolicy.length} routes without a policy, ${checks.publicOutsideList.length} public routes outside the allow-list`,
    )
    assert.ok(routes >= 80, `the route table holds ${routes} routes`)
    assert.deepEqual(checks.withoutPolicy, [])
    assert.deepEqual(checks.publicOutsideList, [])
    assert.deepEqual(mismatches, [])
  })

  it("cloud server: no credential, API keys (site- and network-restricted owner keys too), OIDC member/admin/owner users, a pending user and a platform admin get exactly what each route's declared policy says (POST /auth/token: the uniform 401 without its session cookie): 0 mismatches; 0 routes without a policy; every public route is on the allow-list", async (t) => {
    // No rate limit: 12 callers × the sign-in routes are more requests from one address than a minute allows.
    const h = await identityHarness(t, 'sqlite', shared, NO_RATE_LIMIT)
    const org = h.org
    const callers: Caller[] = [{ name: 'no credential', kind: 'none' }]
    for (const role of ['member', 'admin', 'owner'] as const) {
      callers.push({ name: `${role} API key`, kind: 'apiKey', role, credential: { apiKey: (await h.mintKey(org, role)).plaintext } })
      await h.activate(`u-${role}`, role)
      callers.push({ name: `${role} OIDC user`, kind: 'user', role, credential: { bearer: await h.token(`u-${role}`) } })
    }
    await h.makePlatformAdmin('root')
    callers.push({ name: 'platform admin', kind: 'platformAdmin', credential: { bearer: await h.token('root') } })
    callers.push({ name: 'pending OIDC user', kind: 'pending', credential: { bearer: await h.token('newcomer') } })
    // The organisation's enrolled site server (fleet link): its credential passes the `link` policy and no other.
    const owner = await h.mintKey(org, 'owner')
    const link = await seedCloudLink(h, { org, apiKey: owner.plaintext }, 'AZ')
    callers.push({ name: 'site server link credential', kind: 'link', credential: { bearer: link.credential } })
    callers.push(...(await restrictedKeys(h, org)))
    const checks = routeTableChecks(h)
    const { routes, cells, mismatches } = await matrix(h, org, callers, shared.scheme)
    console.log(
      `# hardening authorisation (cloud server): ${routes} routes x ${callers.length} callers = ${cells} cells, ${mismatches.length} mismatches, ${checks.withoutPolicy.length} routes without a policy, ${checks.publicOutsideList.length} public routes outside the allow-list`,
    )
    assert.deepEqual(checks.withoutPolicy, [])
    assert.deepEqual(checks.publicOutsideList, [])
    assert.deepEqual(mismatches, [])
  })

  it('every route of the allow-list exists in one of the two modes, so the list holds no stale entry', async (t) => {
    const site = await harness(t, 'sqlite')
    const cloud = await identityHarness(t, 'sqlite', shared)
    const present = new Set([...site.app.routeTable, ...cloud.app.routeTable].filter((r) => r.policy === 'public').map(key))
    assert.deepEqual(
      Object.keys(PUBLIC_ALLOW_LIST).filter((k) => !present.has(k)),
      [],
    )
  })
})
