import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { createTestClock, startOidcProvider } from '../../../test/support/oidc-provider.ts'
import type { OidcTestProvider } from '../../../test/support/oidc-provider.ts'
import { createOidcBearerValidator } from './bearer.ts'
import { buildAuthorizationRequest, LOGIN_SCOPE, readAuthorizationCallback } from './code-flow.ts'
import { discoverOidcProvider } from './discovery.ts'
import type { OidcProviderMetadata } from './discovery.ts'
import { AuthorizationCallbackRejected, InvalidBearerToken, InvalidIdToken, OidcTokenRequestFailed } from './errors.ts'
import { verifyIdToken } from './id-token.ts'
import { createOidcKeySet } from './key-set.ts'
import type { OidcKeySet } from './key-set.ts'
import { exchangeCode, refresh } from './token-endpoint.ts'

const AUDIENCE = 'https://api.sitegrid.test'
const CLIENT = { client_id: 'console', client_secret: 'console-secret-0123456789abcdef', redirect_uris: ['https://acme.sitegrid.test/auth/callback'] }
const REDIRECT_URI = 'https://acme.sitegrid.test/auth/callback'
const ALICE = { oid: 'oid-alice-7f3e', email: 'alice@acme.test', name: 'Alice Example', org_slug: 'acme' }

describe('OIDC authorization code flow with PKCE against a real provider', () => {
  let op: OidcTestProvider
  let meta: OidcProviderMetadata
  let keySet: OidcKeySet
  const clock = createTestClock()
  const client = () => ({ tokenEndpoint: meta.tokenEndpoint, clientId: CLIENT.client_id, clientSecret: CLIENT.client_secret })
  const idTokenOptions = () => ({ issuer: meta.issuer, clientId: CLIENT.client_id, keySet, clock: clock.now, clockToleranceSec: 30 })

  before(async () => {
    op = await startOidcProvider({ clients: [CLIENT], accounts: { alice: ALICE, bob: { ...ALICE, oid: 'oid-bob' } }, audience: AUDIENCE })
    meta = await discoverOidcProvider({ issuer: op.issuer })
    keySet = createOidcKeySet({ jwksUri: meta.jwksUri, clock: clock.now })
    await keySet.load()
  })
  after(() => op.stop())

  async function signIn(accountId: string) {
    const request = buildAuthorizationRequest({ authorizationEndpoint: meta.authorizationEndpoint, clientId: CLIENT.client_id, redirectUri: REDIRECT_URI })
    const callback = await op.authorize(request.url, accountId)
    return { request, callback }
  }
  const expectedCallback = (state: string) => ({ state, issuer: meta.issuer, isIssParameterSupported: meta.isIssParameterSupported })

  it('the authorize URL asks for a code with an S256 challenge of the verifier, state, nonce and the login scope', () => {
    const { url, state, nonce, verifier } = buildAuthorizationRequest({
      authorizationEndpoint: meta.authorizationEndpoint,
      clientId: 'console',
      redirectUri: REDIRECT_URI,
      loginHint: 'alice@acme.test',
    })
    assert.equal(url.searchParams.get('response_type'), 'code')
    assert.equal(url.searchParams.get('scope'), LOGIN_SCOPE)
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256')
    assert.equal(url.searchParams.get('code_challenge'), createHash('sha256').update(verifier).digest('base64url'))
    assert.equal(url.searchParams.get('state'), state)
    assert.equal(url.searchParams.get('nonce'), nonce)
    assert.equal(url.searchParams.get('login_hint'), 'alice@acme.test')
    assert.equal(url.searchParams.has('code_verifier'), false)
    assert.match(verifier, /^[A-Za-z0-9_-]{43}$/)
    assert.notEqual(state, buildAuthorizationRequest({ authorizationEndpoint: meta.authorizationEndpoint, clientId: 'c', redirectUri: REDIRECT_URI }).state)
  })

  it('sign-in end to end: state and iss checked, code exchanged with the verifier, ID token nonce checked, access token validates', async () => {
    const { request, callback } = await signIn('alice')
    const code = readAuthorizationCallback(callback.searchParams, expectedCallback(request.state))
    const tokens = await exchangeCode({ ...client(), code, verifier: request.verifier, redirectUri: REDIRECT_URI })
    assert.ok(tokens.idToken)
    const user = await verifyIdToken(tokens.idToken, { ...idTokenOptions(), nonce: request.nonce })
    assert.equal(user.email, ALICE.email)
    const validate = createOidcBearerValidator({ issuer: meta.issuer, audience: AUDIENCE, clockToleranceSec: 30, clock: clock.now, keySet })
    const identity = await validate(tokens.accessToken)
    assert.deepEqual({ oid: identity.oid, orgSlug: identity.orgSlug, sub: identity.sub }, { oid: ALICE.oid, orgSlug: 'acme', sub: user.sub })
    assert.notEqual(identity.sub, identity.oid)
  })

  it('an ID token whose nonce differs from the one sent is refused on nonce', async () => {
    const { request, callback } = await signIn('alice')
    const code = readAuthorizationCallback(callback.searchParams, expectedCallback(request.state))
    const tokens = await exchangeCode({ ...client(), code, verifier: request.verifier, redirectUri: REDIRECT_URI })
    const error = await verifyIdToken(tokens.idToken ?? '', { ...idTokenOptions(), nonce: 'another-login-nonce' }).then(
      () => undefined,
      (e: unknown) => e,
    )
    assert.ok(error instanceof InvalidIdToken)
    assert.equal(error.claim, 'nonce')
  })

  it('a callback whose state differs from the pending login is refused before the code is used', async () => {
    const { callback } = await signIn('alice')
    assert.throws(
      () => readAuthorizationCallback(callback.searchParams, expectedCallback('state-of-another-login')),
      (e: unknown) => e instanceof AuthorizationCallbackRejected && e.reason === 'StateMismatch',
    )
  })

  it('a callback naming another issuer is refused (RFC 9207 mix-up defence)', async () => {
    const { request, callback } = await signIn('alice')
    callback.searchParams.set('iss', 'https://evil.example')
    assert.throws(
      () => readAuthorizationCallback(callback.searchParams, expectedCallback(request.state)),
      (e: unknown) => e instanceof AuthorizationCallbackRejected && e.reason === 'IssuerMismatch',
    )
  })

  it('a provider error on the callback (unknown account: access_denied) is reported as ProviderError', async () => {
    const { request, callback } = await signIn('nobody')
    assert.throws(
      () => readAuthorizationCallback(callback.searchParams, expectedCallback(request.state)),
      (e: unknown) => e instanceof AuthorizationCallbackRejected && e.reason === 'ProviderError' && e.providerError === 'access_denied',
    )
  })

  it('a code exchanged with the wrong PKCE verifier, or a second time, is refused as invalid_grant', async () => {
    const { request, callback } = await signIn('alice')
    const code = readAuthorizationCallback(callback.searchParams, expectedCallback(request.state))
    const wrongVerifier = buildAuthorizationRequest({ authorizationEndpoint: meta.authorizationEndpoint, clientId: 'c', redirectUri: REDIRECT_URI }).verifier
    await assert.rejects(
      exchangeCode({ ...client(), code, verifier: wrongVerifier, redirectUri: REDIRECT_URI }),
      (e: unknown) => e instanceof OidcTokenRequestFailed && e.error === 'invalid_grant',
    )
    const next = await signIn('alice')
    const nextCode = readAuthorizationCallback(next.callback.searchParams, expectedCallback(next.request.state))
    await exchangeCode({ ...client(), code: nextCode, verifier: next.request.verifier, redirectUri: REDIRECT_URI })
    await assert.rejects(
      exchangeCode({ ...client(), code: nextCode, verifier: next.request.verifier, redirectUri: REDIRECT_URI }),
      (e: unknown) => e instanceof OidcTokenRequestFailed && e.error === 'invalid_grant',
    )
  })

  it('a wrong client secret is refused as invalid_client', async () => {
    const { request, callback } = await signIn('alice')
    const code = readAuthorizationCallback(callback.searchParams, expectedCallback(request.state))
    await assert.rejects(
      exchangeCode({ ...client(), clientSecret: 'wrong', code, verifier: request.verifier, redirectUri: REDIRECT_URI }),
      (e: unknown) => e instanceof OidcTokenRequestFailed && e.error === 'invalid_client',
    )
  })

  it('a refresh returns a new access token for the same subject; its ID token must keep the session sub', async () => {
    const { request, callback } = await signIn('bob')
    const code = readAuthorizationCallback(callback.searchParams, expectedCallback(request.state))
    const first = await exchangeCode({ ...client(), code, verifier: request.verifier, redirectUri: REDIRECT_URI })
    const user = await verifyIdToken(first.idToken ?? '', { ...idTokenOptions(), nonce: request.nonce })
    assert.ok(first.refreshToken, 'the provider issues refresh tokens to this client')
    const renewed = await refresh({ ...client(), refreshToken: first.refreshToken })
    assert.notEqual(renewed.accessToken, first.accessToken)
    const validate = createOidcBearerValidator({ issuer: meta.issuer, audience: AUDIENCE, clockToleranceSec: 30, clock: clock.now, keySet })
    assert.equal((await validate(renewed.accessToken)).sub, user.sub)
    assert.ok(renewed.idToken)
    await verifyIdToken(renewed.idToken, { ...idTokenOptions(), expectedSub: user.sub })
    await assert.rejects(
      verifyIdToken(renewed.idToken, { ...idTokenOptions(), expectedSub: 'someone-else' }),
      (e: unknown) => e instanceof InvalidIdToken && e.claim === 'sub',
    )
  })

  it('an ID token is not accepted as a bearer, nor an access token as an ID token', async () => {
    const { request, callback } = await signIn('alice')
    const code = readAuthorizationCallback(callback.searchParams, expectedCallback(request.state))
    const tokens = await exchangeCode({ ...client(), code, verifier: request.verifier, redirectUri: REDIRECT_URI })
    const validate = createOidcBearerValidator({ issuer: meta.issuer, audience: AUDIENCE, clockToleranceSec: 30, clock: clock.now, keySet })
    await assert.rejects(
      async () => validate(tokens.idToken ?? ''),
      (e: unknown) => e instanceof InvalidBearerToken && e.claim === 'aud',
    )
    await assert.rejects(verifyIdToken(tokens.accessToken, { ...idTokenOptions(), nonce: request.nonce }), InvalidIdToken)
  })
})
