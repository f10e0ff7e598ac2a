import { createHmac, randomBytes, randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import type { CryptoKey, JWTHeaderParameters, JWTPayload } from 'jose'
import { Provider } from 'oidc-provider'
import type { ClientLike, Configuration, KoaContextLike, TokenLike } from 'oidc-provider'

// A real, certified OpenID provider (panva/oidc-provider) on loopback, for the relying-party tests.
// Access tokens are RFC 9068 JWTs for `audience`, carrying the account's `oid` and `org_slug`,
// with a pairwise `sub` (OIDC Core §8.1) that never equals the `oid`.

export interface OidcTestAccount {
  oid: string
  /** Forces the pairwise `sub` for this account; derived per client sector otherwise. */
  sub?: string
  email: string
  name: string
  org_slug: string
}
export interface OidcTestClient {
  client_id: string
  client_secret: string
  redirect_uris: string[]
}
export interface StartOidcProviderOptions {
  clients: OidcTestClient[]
  accounts: Record<string, OidcTestAccount>
  audience: string
  alg?: 'RS256' | 'ES256'
  /**
   * Edits each token endpoint answer (its JSON body) before it is sent, for a field no configuration makes the
   * provider send (an `expires_in` of 1e300): the answer stays the real provider's in every other respect.
   */
  tokenResponse?: (body: Record<string, unknown>) => void
}
export interface IssueAccessTokenOptions {
  /** Defaults to the first configured client. */
  clientId?: string
  /** Another resource server's identifier: a real token that is not meant for us. */
  audience?: string
  expiresInSec?: number
}
export interface OidcTestProvider {
  readonly issuer: string
  readonly url: string
  readonly jwksUri: string
  stop(): Promise<void>
  /** Signs with a fresh key under a new `kid`; the old key leaves the JWKS. Sessions and grants survive. */
  rotateKeys(): Promise<string>
  currentKid(): string
  /** Mints a real provider-signed access token through the provider's own AccessToken model. */
  issueAccessToken(accountId: string, options?: IssueAccessTokenOptions): Promise<string>
  /** Plays the browser: follows the authorize URL, logs `accountId` in, consents, returns the redirect_uri URL. */
  authorize(authorizeUrl: string | URL, accountId: string): Promise<URL>
  /** Hand-made JWT signed with the provider's current key, for tests of claims the provider never emits. */
  signJwt(payload: JWTPayload, header?: Partial<JWTHeaderParameters>): Promise<string>
}

/** A frozen clock for the relying party, starting at the real time the provider stamps into its tokens. */
export function createTestClock(): { now: () => Date; advance(ms: number): void } {
  let nowMs = Date.now()
  return {
    now: () => new Date(nowMs),
    advance: (ms) => {
      nowMs += ms
    },
  }
}

interface SigningKey {
  kid: string
  alg: 'RS256' | 'ES256'
  privateKey: CryptoKey
  jwk: Record<string, unknown>
}

const TTL = { AccessToken: 3600, AuthorizationCode: 60, IdToken: 3600, RefreshToken: 86_400, Interaction: 600, Session: 3600, Grant: 3600 }
const RESOURCE_SCOPE = 'api'

export async function startOidcProvider(options: StartOidcProviderOptions): Promise<OidcTestProvider> {
  const alg = options.alg ?? 'RS256'
  const pairwiseSalt = randomBytes(16)
  const cookieKeys = [randomBytes(32).toString('base64url')]
  const server = createServer((req, res) => handle(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const issuer = `http://127.0.0.1:${port}`

  const state = { pairwiseSalt, cookieKeys, adapter: createMemoryAdapter() }
  let key = await generateSigningKey(alg)
  let provider = buildProvider(issuer, key, options, state)
  let handle = provider.callback()

  return {
    issuer,
    url: issuer,
    jwksUri: `${issuer}/jwks`,
    async stop() {
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        server.closeAllConnections()
      })
    },
    async rotateKeys() {
      // The keystore is fixed at construction, so a rotation is a new Provider on the same issuer,
      // sharing this handle's storage, so sessions, grants and refresh tokens carry over.
      key = await generateSigningKey(alg)
      provider = buildProvider(issuer, key, options, state)
      handle = provider.callback()
      return key.kid
    },
    currentKid: () => key.kid,
    async issueAccessToken(accountId, opts = {}) {
      if (!(accountId in options.accounts)) throw new Error(`unknown test account ${accountId}`)
      const clientId = opts.clientId ?? options.clients[0]?.client_id
      const client = clientId === undefined ? undefined : await provider.Client.find(clientId)
      if (!client) throw new Error(`unknown test client ${String(clientId)}`)
      const audience = opts.audience ?? options.audience
      const token = new provider.AccessToken({
        accountId,
        client,
        gty: 'authorization_code',
        expiresIn: opts.expiresInSec ?? TTL.AccessToken,
        resourceServer: new provider.ResourceServer(audience, resourceServerInfo(audience, alg)),
      })
      return token.save()
    },
    authorize: (authorizeUrl, accountId) => playBrowser(new URL(authorizeUrl), accountId, issuer, options.clients),
    signJwt: (payload, header = {}) => new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt', ...header }).sign(key.privateKey),
  }
}

async function generateSigningKey(alg: 'RS256' | 'ES256'): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true })
  const kid = `k-${randomUUID()}`
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' } }
}

function resourceServerInfo(audience: string, alg: string) {
  return { scope: RESOURCE_SCOPE, audience, accessTokenFormat: 'jwt' as const, accessTokenTTL: TTL.AccessToken, jwt: { sign: { alg } } }
}

function buildProvider(
  issuer: string,
  key: SigningKey,
  options: StartOidcProviderOptions,
  secrets: { pairwiseSalt: Buffer; cookieKeys: string[]; adapter: AdapterFactory },
): Provider {
  const { accounts, audience } = options
  const configuration: Configuration = {
    clients: options.clients.map((client) => ({
      ...client,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      subject_type: 'pairwise',
      id_token_signed_response_alg: key.alg,
    })),
    adapter: secrets.adapter,
    jwks: { keys: [key.jwk] },
    cookies: { keys: secrets.cookieKeys },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    subjectTypes: ['public', 'pairwise'],
    pairwiseIdentifier: (_ctx: unknown, accountId: string, client: ClientLike) =>
      accounts[accountId]?.sub ?? createHmac('sha256', secrets.pairwiseSalt).update(`${client.clientId}\0${accountId}`).digest('base64url'),
    async findAccount(_ctx: unknown, id: string) {
      const account = accounts[id]
      if (!account) return undefined
      return {
        accountId: id,
        claims: async () => ({ sub: id, email: account.email, email_verified: true, name: account.name }),
      }
    },
    async extraTokenClaims(_ctx: unknown, token: TokenLike) {
      const account = token.accountId === undefined ? undefined : accounts[token.accountId]
      return account ? { oid: account.oid, org_slug: account.org_slug } : undefined
    },
    // Refresh tokens without offline_access, as Entra ID does, so the RP's refresh path runs.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    pkce: { required: () => true },
    ttl: TTL,
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => audience,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, indicator: string) => resourceServerInfo(indicator, key.alg),
      },
    },
  }
  const provider = new Provider(issuer, configuration)
  provider.use((ctx, next) => autoInteraction(provider, accounts, ctx, next))
  const { tokenResponse } = options
  if (tokenResponse) {
    provider.use(async (ctx, next) => {
      await next()
      if (ctx.path === '/token' && ctx.status === 200 && typeof ctx.body === 'object' && ctx.body !== null) tokenResponse(ctx.body as Record<string, unknown>)
    })
  }
  return provider
}

// Stands in for the login and consent pages: GET /interaction/:uid?login_as=<accountId> (or the
// request's login_hint) logs that account in, and the consent step grants whatever was asked.
async function autoInteraction(provider: Provider, accounts: Record<string, OidcTestAccount>, ctx: KoaContextLike, next: () => Promise<void>): Promise<void> {
  const match = /^\/interaction\/([\w-]+)$/.exec(ctx.path)
  if (!match || ctx.method !== 'GET') return next()
  const details = await provider.interactionDetails(ctx.req, ctx.res)
  if (details.uid !== match[1]) {
    ctx.status = 400
    ctx.body = 'interaction mismatch'
    return
  }
  let result: Record<string, unknown>
  if (details.prompt.name === 'login') {
    const loginAs = ctx.query['login_as'] ?? details.params['login_hint']
    result =
      typeof loginAs === 'string' && loginAs in accounts
        ? { login: { accountId: loginAs } }
        : { error: 'access_denied', error_description: 'unknown test account' }
  } else {
    const accountId = details.session?.accountId
    const clientId = details.params['client_id']
    if (accountId === undefined || typeof clientId !== 'string') throw new Error('consent without a session')
    const grant = (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ?? new provider.Grant({ accountId, clientId })
    const missing = details.prompt.details
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims)
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '))
    }
    result = { consent: { grantId: await grant.save() } }
  }
  const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false })
  ctx.status = 303
  ctx.redirect(returnTo)
}

async function playBrowser(start: URL, accountId: string, issuer: string, clients: OidcTestClient[]): Promise<URL> {
  const callbacks = new Set(clients.flatMap((client) => client.redirect_uris))
  const jar = new Map<string, string>()
  let url = start
  for (let hop = 0; hop < 12; hop += 1) {
    if (url.origin !== issuer || callbacks.has(`${url.origin}${url.pathname}`)) return url
    if (url.pathname.startsWith('/interaction/')) url.searchParams.set('login_as', accountId)
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} })
    for (const line of res.headers.getSetCookie()) storeCookie(jar, line)
    const body = await res.text()
    const location = res.headers.get('location')
    if (res.status < 300 || res.status > 399 || location === null) {
      throw new Error(`provider answered ${res.status} at ${url.pathname}: ${body.slice(0, 300)}`)
    }
    url = new URL(location, url)
  }
  throw new Error('too many redirects at the provider')
}

// A jar that ignores Path: every cookie goes to every provider URL, which the provider tolerates.
function storeCookie(jar: Map<string, string>, line: string): void {
  const [pair = '', ...attributes] = line.split(';')
  const eq = pair.indexOf('=')
  if (eq < 1) return
  const name = pair.slice(0, eq).trim()
  const value = pair.slice(eq + 1).trim()
  const expires = attributes.map((a) => a.trim()).find((a) => /^expires=/i.test(a))
  const isExpired = expires !== undefined && Date.parse(expires.slice(8)) <= Date.now()
  if (value === '' || isExpired) jar.delete(name)
  else jar.set(name, value)
}

// A storage per provider handle (oidc-provider's own memory adapter is one process-wide LRU and warns).
type Stored = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: number }
export type AdapterFactory = (model: string) => ReturnType<typeof adapterFor>

function createMemoryAdapter(): AdapterFactory {
  const rows = new Map<string, { payload: Stored; expiresAt: number }>()
  const index = new Map<string, string>() // "uid:…" / "userCode:…" → id
  const grants = new Map<string, Set<string>>() // grantId → row keys
  return (model) => adapterFor(model, rows, index, grants)
}

function adapterFor(model: string, rows: Map<string, { payload: Stored; expiresAt: number }>, index: Map<string, string>, grants: Map<string, Set<string>>) {
  const read = (key: string): Stored | undefined => {
    const row = rows.get(key)
    if (row && row.expiresAt <= Date.now()) rows.delete(key)
    return row && row.expiresAt > Date.now() ? row.payload : undefined
  }
  const find = async (id: string | undefined) => (id === undefined ? undefined : read(`${model}:${id}`))
  return {
    async upsert(id: string, payload: Stored, expiresInSec?: number) {
      const key = `${model}:${id}`
      rows.set(key, { payload, expiresAt: expiresInSec ? Date.now() + expiresInSec * 1000 : Infinity })
      if (payload.grantId) grants.set(payload.grantId, (grants.get(payload.grantId) ?? new Set()).add(key))
      if (model === 'Session' && payload.uid) index.set(`uid:${payload.uid}`, id)
      if (payload.userCode) index.set(`userCode:${payload.userCode}`, id)
    },
    find,
    findByUid: async (uid: string) => find(index.get(`uid:${uid}`)),
    findByUserCode: async (userCode: string) => find(index.get(`userCode:${userCode}`)),
    async consume(id: string) {
      const payload = read(`${model}:${id}`)
      if (payload) payload.consumed = Math.floor(Date.now() / 1000)
    },
    async destroy(id: string) {
      rows.delete(`${model}:${id}`)
    },
    async revokeByGrantId(grantId: string) {
      for (const key of grants.get(grantId) ?? []) rows.delete(key)
      grants.delete(grantId)
    },
  }
}
