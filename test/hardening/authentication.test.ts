// Issue 14, broken authentication (OWASP API2): every failure kind answers the one uniform 401.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { SITE_ISSUER } from '../../src/auth/site-pin/token-policy.ts'
import { comparableBody, comparableHeaders, harness, testDialects } from '../harness.ts'
import { claimsFor, forgedBearerTokens } from '../oidc/forged-tokens.ts'
import { identityHarness, startSharedProvider, type SharedProvider } from '../oidc/identity-harness.ts'
import { CHEAP_PINS, signedIn } from '../site/support.ts'

const URL_UNDER_TEST = '/api/admin/api-keys'

/** Status, body (without its request id) and headers (without Date) of an answer, for "identical". */
const shape = (res: LightMyRequestResponse) => ({ status: res.statusCode, body: comparableBody(res.body), headers: comparableHeaders(res.headers) })

let shared: SharedProvider
before(async () => {
  shared = await startSharedProvider({ slots: 4 })
})
after(() => shared.stop())

for (const dialect of testDialects()) {
  describe(`${dialect}: broken authentication (OWASP API2)`, () => {
    it('every failure kind (API keys: missing, empty, malformed, not a key, unknown, one character off, revoked, foreign, unknown host, expired; bearer: garbage, Basic, alg none, HS256 with the RSA public key, wrong iss/aud, exp past, nbf future, unknown kid, …; a -local token on the cloud server; a cloud token and a cloud-signed "-local" token on the site server) answers 100 % the identical 401: status, body and headers but Date and request id', async (t) => {
      const cloud = await identityHarness(t, dialect, shared)
      const org = cloud.org
      await cloud.activate('ada', 'owner')
      const { plaintext: key } = await cloud.mintKey(org, 'owner')
      const other = await cloud.orgWithKey('owner')
      const revoked = await cloud.mintKey(org, 'owner')
      assert.equal((await cloud.inject({ org, apiKey: key }, { method: 'DELETE', url: `${URL_UNDER_TEST}/${revoked.keyId}` })).statusCode, 204)
      const expiring = await cloud.mintKey(org, 'owner', { lifetimeMs: 3_600_000 })
      const site = await harness(t, dialect, CHEAP_PINS)
      const siteOrg = await site.createOrg()
      const siteSession = await signedIn(site, siteOrg, 'owner')

      const host = `${org.slug}.localhost`
      const atCloud = (headers: Record<string, string>, at = host) => cloud.inject(undefined, { url: URL_UNDER_TEST, host: at, headers })
      const atSite = (headers: Record<string, string>) => site.inject(undefined, { url: URL_UNDER_TEST, host: `${siteOrg.slug}.localhost`, headers })
      const cloudReference = await atCloud({})
      const siteReference = await atSite({})

      const cloudKinds: Record<string, () => Promise<LightMyRequestResponse>> = {
        'no credential': () => atCloud({}),
        'empty API key': () => atCloud({ 'x-api-key': '' }),
        'malformed API key (too short)': () => atCloud({ 'x-api-key': 'csk_short' }),
        'not an API key': () => atCloud({ 'x-api-key': 'hello world' }),
        'unknown API key': () => atCloud({ 'x-api-key': `csk_${'A'.repeat(32)}` }),
        'API key one character off': () => atCloud({ 'x-api-key': key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a') }),
        'revoked API key': () => atCloud({ 'x-api-key': revoked.plaintext }),
        "foreign API key (another organisation's)": () => atCloud({ 'x-api-key': other.key }),
        'valid API key at an unknown host': () => atCloud({ 'x-api-key': key }, 'nobody.localhost'),
        'bearer that is no JWT': () => atCloud({ authorization: 'Bearer not.a.jwt' }),
        'Basic scheme': () => atCloud({ authorization: 'Basic dXNlcjpwYXNz' }),
        'site-PIN (-local) token on the cloud server': () => atCloud({ authorization: `Bearer ${siteSession.accessToken}` }),
      }
      for (const [kind, token] of Object.entries(await forgedBearerTokens(cloud, 'ada')))
        cloudKinds[`bearer: ${kind}`] = () => atCloud({ authorization: `Bearer ${token}` })
      const cloudSignedLocal = await cloud.op.signJwt(claimsFor(cloud, 'ada', { iss: SITE_ISSUER, aud: 'sitegrid-site' }))
      const siteKinds: Record<string, () => Promise<LightMyRequestResponse>> = {
        'cloud provider token on the site server': async () => atSite({ authorization: `Bearer ${await cloud.token('ada')}` }),
        "cloud-signed token claiming the -local issuer, on the site server's local validator": () => atSite({ authorization: `Bearer ${cloudSignedLocal}` }),
        'cloud API key on the site server': () => atSite({ 'x-api-key': key }),
      }

      // Controls: the same credentials, used rightly, are accepted; so each refusal is about the failure alone.
      assert.equal((await atCloud({ 'x-api-key': key })).statusCode, 200)
      assert.equal((await atCloud({ authorization: `Bearer ${await cloud.token('ada')}` })).statusCode, 200)
      assert.equal((await atSite({ authorization: `Bearer ${siteSession.accessToken}` })).statusCode, 200)

      const differing: string[] = []
      let kinds = 0
      const check = (kind: string, res: LightMyRequestResponse, reference: LightMyRequestResponse) => {
        kinds++
        try {
          assert.deepEqual(shape(res), shape(reference))
        } catch {
          differing.push(`${kind}: ${res.statusCode} ${res.body.slice(0, 160)}`)
        }
      }
      for (const [kind, send] of Object.entries(cloudKinds)) check(kind, await send(), cloudReference)
      for (const [kind, send] of Object.entries(siteKinds)) check(kind, await send(), siteReference)
      cloud.clock.advance(3_600_000) // last: the clock moves past the key's expiry (and every token's)
      check('expired API key', await atCloud({ 'x-api-key': expiring.plaintext }), cloudReference)

      const uniform = kinds - differing.length
      console.log(`# hardening authentication (${dialect}): ${kinds} failure kinds, ${uniform} identical 401 (${Math.round((100 * uniform) / kinds)} %)`)
      assert.equal(cloudReference.statusCode, 401)
      assert.equal(cloudReference.json().code, 'Unauthorized')
      assert.deepEqual(shape(siteReference), shape(cloudReference), "the site server's 401 is the cloud server's")
      assert.ok(kinds >= 15)
      assert.deepEqual(differing, [])
    })
  })
}
