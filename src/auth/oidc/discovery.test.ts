import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startOidcProvider } from '../../../test/support/oidc-provider.ts'
import type { OidcTestProvider } from '../../../test/support/oidc-provider.ts'
import { discoverOidcProvider } from './discovery.ts'
import { OidcDiscoveryFailed } from './errors.ts'
import { HttpJsonFailed, requestJson } from './http-json.ts'

const ISSUER = 'https://login.example/tenant-a/v2.0'
const DOCUMENT = {
  issuer: ISSUER,
  authorization_endpoint: 'https://login.example/tenant-a/oauth2/v2.0/authorize',
  token_endpoint: 'https://login.example/tenant-a/oauth2/v2.0/token',
  jwks_uri: 'https://login.example/tenant-a/discovery/v2.0/keys',
  response_types_supported: ['code', 'id_token'],
  id_token_signing_alg_values_supported: ['RS256'],
}

/** Serves one document at the exact well-known URL and records what was asked. */
function serving(document: unknown, init: ResponseInit = {}) {
  const requested: string[] = []
  const fetchImpl: typeof fetch = async (input) => {
    requested.push(String(input))
    return String(input) === `${ISSUER}/.well-known/openid-configuration` ? Response.json(document, init) : new Response('not found', { status: 404 })
  }
  return { requested, fetch: fetchImpl }
}

async function failureOf(promise: Promise<unknown>): Promise<OidcDiscoveryFailed> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  assert.ok(error instanceof OidcDiscoveryFailed, `expected OidcDiscoveryFailed, got ${String(error)}`)
  return error
}

describe('OIDC discovery', () => {
  let op: OidcTestProvider
  before(async () => {
    op = await startOidcProvider({ clients: [], accounts: {}, audience: 'https://api.sitegrid.test' })
  })
  after(() => op.stop())

  it('the real provider document yields its endpoints and the RFC 9207 iss support', async () => {
    const meta = await discoverOidcProvider({ issuer: op.issuer })
    assert.equal(meta.issuer, op.issuer)
    assert.equal(meta.jwksUri, op.jwksUri)
    assert.equal(meta.tokenEndpoint, `${op.issuer}/token`)
    assert.equal(meta.authorizationEndpoint, `${op.issuer}/auth`)
    assert.equal(meta.isIssParameterSupported, true)
    assert.ok(Object.isFrozen(meta))
  })

  it('an issuer that differs only by a trailing slash is a mismatch', async () => {
    await failureOf(discoverOidcProvider({ issuer: `${op.issuer}/` }))
  })

  it('a path issuer is fetched at issuer + /.well-known/openid-configuration', async () => {
    const server = serving(DOCUMENT)
    const meta = await discoverOidcProvider({ issuer: ISSUER, fetch: server.fetch })
    assert.deepEqual(server.requested, [`${ISSUER}/.well-known/openid-configuration`])
    assert.equal(meta.jwksUri, DOCUMENT.jwks_uri)
    assert.equal(meta.isIssParameterSupported, false)
  })

  const refusals: [string, unknown][] = [
    ['a document naming another issuer', { ...DOCUMENT, issuer: 'https://login.example/tenant-b/v2.0' }],
    ['a document without jwks_uri', { ...DOCUMENT, jwks_uri: undefined }],
    ['a document without token_endpoint', { ...DOCUMENT, token_endpoint: undefined }],
    ['an http endpoint off loopback', { ...DOCUMENT, authorization_endpoint: 'http://login.example/authorize' }],
    ['a provider without response_type code', { ...DOCUMENT, response_types_supported: ['id_token'] }],
    ['a provider advertising PKCE without S256', { ...DOCUMENT, code_challenge_methods_supported: ['plain'] }],
    ['a provider that signs ID tokens only with HS256', { ...DOCUMENT, id_token_signing_alg_values_supported: ['HS256'] }],
    ['a JSON array instead of an object', [DOCUMENT]],
  ]
  for (const [what, document] of refusals) {
    it(`${what} fails discovery`, async () => {
      await failureOf(discoverOidcProvider({ issuer: ISSUER, fetch: serving(document).fetch }))
    })
  }

  it('a non-200 answer or an unreachable provider fails discovery', async () => {
    await failureOf(discoverOidcProvider({ issuer: ISSUER, fetch: serving(DOCUMENT, { status: 503 }).fetch }))
    await failureOf(
      discoverOidcProvider({
        issuer: ISSUER,
        fetch: async () => {
          throw new TypeError('fetch failed')
        },
      }),
    )
  })

  it('a network failure of the GET is retried once (a kept-alive connection closed as it was reused); a second one fails; a POST is not retried', async () => {
    const flaky = (failures: number) => {
      const served = serving(DOCUMENT)
      let calls = 0
      const fetchImpl: typeof fetch = async (input, init) => {
        calls++
        if (calls <= failures) throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) })
        return served.fetch(input, init)
      }
      return { fetch: fetchImpl, calls: () => calls }
    }
    const once = flaky(1)
    assert.equal((await discoverOidcProvider({ issuer: ISSUER, fetch: once.fetch })).tokenEndpoint, DOCUMENT.token_endpoint)
    assert.equal(once.calls(), 2)
    const twice = flaky(2)
    await failureOf(discoverOidcProvider({ issuer: ISSUER, fetch: twice.fetch }))
    assert.equal(twice.calls(), 2, 'one retry, not more')
    const post = flaky(1)
    await assert.rejects(requestJson(ISSUER, { method: 'POST', body: 'grant_type=x' }, { fetch: post.fetch, timeoutMs: 1000, maxBytes: 1024 }), HttpJsonFailed)
    assert.equal(post.calls(), 1, 'a POST (the token endpoint) is never sent twice')
  })

  it('a document larger than the size cap fails discovery', async () => {
    const huge = { ...DOCUMENT, padding: 'x'.repeat(300 * 1024) }
    await failureOf(discoverOidcProvider({ issuer: ISSUER, fetch: serving(huge).fetch }))
  })

  it('an issuer that is not an https URL (or http loopback) is a TypeError', async () => {
    await assert.rejects(discoverOidcProvider({ issuer: 'http://login.example' }), TypeError)
    await assert.rejects(discoverOidcProvider({ issuer: 'login.example' }), TypeError)
    await assert.rejects(discoverOidcProvider({ issuer: 'https://login.example?x=1' }), TypeError)
  })
})
