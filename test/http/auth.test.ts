import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { comparableBody, comparableHeaders, harness, testDialects } from '../harness.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: the auth selector and tenancy`, () => {
    it('every failed credential answers one uniform 401: same status, body and headers', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      const other = await h.orgWithKey()
      const revoked = await h.mintKey(org, 'owner')
      await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/api-keys/${revoked.keyId}` })
      const expired = await h.mintKey(org, 'owner', { lifetimeMs: 3_600_000 })
      const url = '/api/admin/api-keys'
      const wrong = `csk_${'A'.repeat(32)}`
      const tries = {
        none: await h.inject(undefined, { url, host: `${org.slug}.localhost` }),
        malformed: await h.inject({ org, apiKey: 'csk_short' }, { url }),
        notAKey: await h.inject({ org, apiKey: 'hello world' }, { url }),
        unknown: await h.inject({ org, apiKey: wrong }, { url }),
        wrongByOneChar: await h.inject({ org, apiKey: key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a') }, { url }),
        revoked: await h.inject({ org, apiKey: revoked.plaintext }, { url }),
        foreignKey: await h.inject({ org, apiKey: other.key }, { url }),
        unknownHost: await h.inject({ org, apiKey: key }, { url, host: 'nobody.localhost' }),
        emptyKey: await h.inject({ org, apiKey: '' }, { url }),
        bearerGarbage: await h.inject({ org, bearer: 'not.a.jwt' }, { url }),
        basicScheme: await h.inject(undefined, { url, host: `${org.slug}.localhost`, headers: { authorization: 'Basic dXNlcjpwYXNz' } }),
      }
      h.clock.advance(3_600_000)
      const late = await h.inject({ org, apiKey: expired.plaintext }, { url })
      const all = { ...tries, expired: late }
      const reference = tries.none
      for (const [kind, res] of Object.entries(all)) {
        assert.equal(res.statusCode, 401, kind)
        assert.deepEqual(comparableBody(res.body), comparableBody(reference.body), kind)
        assert.deepEqual(comparableHeaders(res.headers), comparableHeaders(reference.headers), kind)
      }
      assert.equal(reference.json().code, 'Unauthorized')
      assert.equal(reference.headers['content-type'], 'application/problem+json; charset=utf-8')
    })

    it('with both X-Api-Key and Authorization the API key is used, a warning is logged, and nothing is refused with 400', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      const res = await h.inject({ org, apiKey: key, bearer: 'eyJhbGciOiJub25lIn0.e30.' }, { url: '/api/admin/api-keys' })
      assert.equal(res.statusCode, 200)
      assert.ok(h.logs().some((l) => l.level === 40 && l.event === 'auth.both_credentials'))
      const bad = await h.inject({ org, apiKey: 'csk_bad', bearer: 'whatever' }, { url: '/api/admin/api-keys' })
      assert.equal(bad.statusCode, 401)
    })

    it('credential headers and secret fields are redacted from every log line', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      h.app.log.info({ req: { headers: { 'x-api-key': key, authorization: 'Bearer secret-token' } }, body: { plaintext: key } }, 'probe')
      await h.inject({ org, apiKey: key }, { url: '/api/admin/api-keys' })
      assert.ok(!h.rawLogs().includes(key))
      assert.ok(!h.rawLogs().includes('secret-token'))
      assert.ok(h.rawLogs().includes('[redacted]'))
    })

    it("the tenant is the Host header's: a key works only at its organisation's host", async (t) => {
      const h = await harness(t, dialect)
      const a = await h.orgWithKey()
      const b = await h.orgWithKey()
      assert.equal((await h.inject({ org: a.org, apiKey: a.key }, { url: '/api/admin/api-keys', host: `${a.org.slug}.localhost:8080` })).statusCode, 200)
      assert.equal((await h.inject({ org: a.org, apiKey: a.key }, { url: '/api/admin/api-keys', host: `${b.org.slug}.localhost` })).statusCode, 401)
      assert.equal((await h.inject({ org: a.org, apiKey: a.key }, { url: '/api/admin/api-keys', host: `x.${a.org.slug}.localhost` })).statusCode, 401)
    })

    it('site mode serves its organisation on a bare host (IP, box name); cloud mode does not', async (t) => {
      const slug = `plant-${Math.random().toString(36).slice(2, 8)}`
      const site = await harness(t, dialect, { SITEGRID_MODE: 'site', SITEGRID_SITE_ORG: slug })
      const org = await site.createOrg(slug)
      const { plaintext } = await site.mintKey(org)
      assert.equal((await site.inject({ org, apiKey: plaintext }, { url: '/api/admin/api-keys', host: '127.0.0.1:8080' })).statusCode, 200)
      const cloud = await harness(t, dialect, { SITEGRID_MODE: 'cloud' })
      const c = await cloud.orgWithKey()
      assert.equal((await cloud.inject({ org: c.org, apiKey: c.key }, { url: '/api/admin/api-keys', host: '127.0.0.1:8080' })).statusCode, 401)
    })

    it('public routes need no credential: health, readiness, the OpenAPI document and problem pages', async (t) => {
      const h = await harness(t, dialect)
      for (const url of ['/healthz', '/readyz', '/openapi.json', '/problems/NotFound']) {
        const res = await h.inject(undefined, { url })
        assert.equal(res.statusCode, 200, url)
      }
      const doc = (await h.inject(undefined, { url: '/openapi.json' })).json()
      assert.equal(doc.openapi, '3.1.0')
      assert.ok(doc.paths['/api/admin/api-keys'].post)
      assert.ok(doc.paths['/api/admin/api-keys/{keyId}'].delete)
      assert.deepEqual(doc.paths['/healthz'].get.security, [])
    })

    it('a route without a policy cannot be registered: closed by default', async (t) => {
      const h = await harness(t, dialect)
      assert.throws(() => h.app.get('/api/leaky', async () => ({ secret: true })), /declares no policy/)
    })

    it('malformed JSON, a wrong content type, an empty and an oversized body are 4xx problems, never 500', async (t) => {
      const h = await harness(t, dialect, { SITEGRID_BODY_LIMIT_BYTES: '2048' })
      const { org, key } = await h.orgWithKey()
      const url = '/api/admin/api-keys'
      const broken = await h.inject({ org, apiKey: key }, { method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '{"role":' })
      assert.equal(broken.statusCode, 400)
      assert.equal(broken.json().code, 'MalformedBody')
      const text = await h.inject({ org, apiKey: key }, { method: 'POST', url, headers: { 'content-type': 'application/xml' }, payload: '<role>owner</role>' })
      assert.equal(text.statusCode, 415)
      assert.equal(text.json().code, 'UnsupportedMediaType')
      const big = await h.inject(
        { org, apiKey: key },
        { method: 'POST', url, payload: { role: 'member', name: 'x'.repeat(3000), expiresAt: new Date(h.clock.now() + 86_400_000).toISOString() } },
      )
      assert.equal(big.statusCode, 413)
      assert.equal(big.json().code, 'PayloadTooLarge')
      const empty = await h.inject({ org, apiKey: key }, { method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '' })
      assert.equal(empty.statusCode, 400)
      for (const res of [broken, text, big, empty]) {
        assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
        assert.ok(!/\n\s+at /.test(res.body), 'no stack trace')
      }
    })

    it('an unknown path is a 404 problem', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      const res = await h.inject({ org, apiKey: key }, { url: '/api/nothing-here' })
      assert.equal(res.statusCode, 404)
      assert.equal(res.json().code, 'NotFound')
    })

    it('the per-credential rate limit answers 429 RateLimited with Retry-After, and other credentials are unaffected', async (t) => {
      const h = await harness(t, dialect, { SITEGRID_RATE_LIMIT_PER_MINUTE: '3' })
      const a = await h.orgWithKey()
      const b = await h.orgWithKey()
      const statuses = []
      for (let i = 0; i < 4; i++) statuses.push((await h.inject({ org: a.org, apiKey: a.key }, { url: '/api/admin/api-keys' })).statusCode)
      assert.deepEqual(statuses, [200, 200, 200, 429])
      const limited = await h.inject({ org: a.org, apiKey: a.key }, { url: '/api/admin/api-keys' })
      assert.equal(limited.json().code, 'RateLimited')
      assert.ok(Number(limited.headers['retry-after']) >= 1)
      assert.equal((await h.inject({ org: b.org, apiKey: b.key }, { url: '/api/admin/api-keys' })).statusCode, 200)
      h.clock.advance(60_000)
      assert.equal((await h.inject({ org: a.org, apiKey: a.key }, { url: '/api/admin/api-keys' })).statusCode, 200)
    })
  })
}
