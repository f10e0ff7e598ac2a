import { randomBytes } from 'node:crypto'
import type { TestContext } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { CLI_ACTOR, type Role, type Org } from '../../src/identity.ts'
import { endSessionsOfAccount } from '../../src/auth/sessions/end-sessions.ts'
import { createMembersService } from '../../src/modules/orgs/members-service.ts'
import { createPlatformAdminsService } from '../../src/modules/orgs/platform-admins-service.ts'
import { harness, type Harness, type TestDialect } from '../harness.ts'
import { startOidcProvider, type OidcTestAccount, type OidcTestProvider, type StartOidcProviderOptions } from '../support/oidc-provider.ts'

export const AUDIENCE = 'https://api.sitegrid.test'
export const CLIENT_ID = 'console'
const clientIdOf = (slug: string) => `${CLIENT_ID}-${slug}`
export const CLIENT_SECRET = 'console-secret-0123456789abcdef'

export interface IdentityHarness extends Harness {
  op: OidcTestProvider
  org: Org
  /** The provider's account id (unique to this test) for a short test name such as `ada`. */
  accountKey(name: string): string
  /** A provider-issued access token for `name` (its oid is `oid-<name>-<slug>`). */
  token(name: string): Promise<string>
  oidOf(name: string): string
  /** An active membership with `role`, as if approved by the CLI. */
  activate(name: string, role: Role, org?: Org): Promise<void>
  makePlatformAdmin(name: string): Promise<void>
  bearer(token: string, options: { method: 'GET' | 'POST' | 'DELETE'; url: string; payload?: unknown; org?: Org }): Promise<LightMyRequestResponse>
}

/**
 * One real OpenID provider on loopback for a whole test file (starting one per test is slow on a busy
 * machine). Its client accepts the callback URL of a pool of organisation slugs; each test takes one.
 */
export interface SharedProvider {
  op: OidcTestProvider
  accounts: Record<string, OidcTestAccount>
  scheme: 'http' | 'https'
  takeSlug(): string
  stop(): Promise<void>
}

export async function startSharedProvider(
  options: { scheme?: 'http' | 'https'; port?: number; slots?: number; tokenResponse?: StartOidcProviderOptions['tokenResponse'] } = {},
): Promise<SharedProvider> {
  const scheme = options.scheme ?? 'https'
  const slugs = Array.from({ length: options.slots ?? 60 }, () => `t-${randomBytes(5).toString('hex')}`)
  const accounts: Record<string, OidcTestAccount> = {}
  const op = await startOidcProvider({
    // One client per organisation: a pairwise client whose redirect URIs span several hosts would need a
    // sector_identifier_uri (OIDC Core §8.1).
    clients: slugs.map((slug) => ({
      client_id: clientIdOf(slug),
      client_secret: CLIENT_SECRET,
      redirect_uris: [`${scheme}://${slug}.localhost${options.port ? `:${options.port}` : ''}/auth/callback`],
    })),
    accounts,
    audience: AUDIENCE,
    ...(options.tokenResponse ? { tokenResponse: options.tokenResponse } : {}),
  })
  // Under heavy load a pooled keep-alive connection to the provider can be closed by its server (5 s idle
  // timeout) just as the next request reuses it (ECONNRESET). Every hop of authorize() is a GET that
  // changes nothing until the final redirect, so another try from the authorize URL is safe.
  const authorize = op.authorize.bind(op)
  op.authorize = async (url, accountId) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await authorize(url, accountId)
      } catch (error) {
        if (attempt >= 3 || !(error instanceof TypeError && error.message === 'fetch failed')) throw error
      }
    }
  }
  return {
    op,
    accounts,
    scheme,
    takeSlug() {
      const slug = slugs.pop()
      if (slug === undefined) throw new Error('the shared provider has no organisation slot left: raise `slots`')
      return slug
    },
    stop: () => op.stop(),
  }
}

/** A cloud-mode app wired to the shared provider, with one organisation of the pool. */
export async function identityHarness(
  t: TestContext,
  dialect: TestDialect,
  shared: SharedProvider,
  env: Record<string, string> = {},
): Promise<IdentityHarness> {
  const { op, accounts } = shared
  const slug = shared.takeSlug()
  const h = await harness(t, dialect, {
    SITEGRID_MODE: 'cloud',
    SITEGRID_OIDC_ISSUER: op.issuer,
    SITEGRID_OIDC_AUDIENCE: AUDIENCE,
    SITEGRID_OIDC_CLIENT_ID: clientIdOf(slug),
    SITEGRID_OIDC_CLIENT_SECRET: CLIENT_SECRET,
    SITEGRID_PUBLIC_ORIGIN_SCHEME: shared.scheme,
    ...env,
  })
  const org = await h.createOrg(slug)
  const members = createMembersService({ handle: h.handle, clock: h.clock, endSessions: endSessionsOfAccount })
  const platformAdmins = createPlatformAdminsService({ handle: h.handle, clock: h.clock })
  const ensure = (name: string) => {
    const key = `${name}.${slug}`
    accounts[key] ??= { oid: `oid-${name}-${slug}`, email: `${name}@example.test`, name: `User ${name}`, org_slug: slug }
    return { key, account: accounts[key] }
  }
  return Object.assign(h, {
    op,
    org,
    accountKey: (name: string) => ensure(name).key,
    oidOf: (name: string) => ensure(name).account.oid,
    token: (name: string) => op.issueAccessToken(ensure(name).key),
    async activate(name: string, role: Role, target: Org = org) {
      const { account } = ensure(name)
      await members.recordSignIn(target.id, { oid: account.oid, email: account.email, name: account.name })
      await members.approve(target.id, { actor: CLI_ACTOR, isPlatformAdmin: true }, account.oid, role)
    },
    async makePlatformAdmin(name: string) {
      await platformAdmins.add(ensure(name).account.oid, null)
    },
    bearer(token: string, req: { method: 'GET' | 'POST' | 'DELETE'; url: string; payload?: unknown; org?: Org }) {
      return h.inject(
        { org: req.org ?? org, bearer: token },
        { method: req.method, url: req.url, ...(req.payload === undefined ? {} : { payload: req.payload as object }) },
      )
    },
  })
}

/** The provider's JWKS, retried like authorize() against a keep-alive connection closed under load. */
export async function fetchProviderJwks(op: OidcTestProvider): Promise<{ keys: Record<string, string>[] }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await (await fetch(op.jwksUri)).json()) as { keys: Record<string, string>[] }
    } catch (error) {
      if (attempt >= 3 || !(error instanceof TypeError)) throw error
    }
  }
}
