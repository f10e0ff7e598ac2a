import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { comparableBody, comparableHeaders, harness, testDialects } from '../../../test/harness.ts'
import { CHEAP_PINS, addSiteUser, login } from '../../../test/site/support.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: site-PIN sign-in`, () => {
    it('a correct PIN returns a 15-minute ES256 token from the -local issuer with the site role, no oid and no org role, and a refresh token', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const user = await addSiteUser(h, org, 'admin')
      const res = await login(h, org, user.email.toUpperCase(), user.pin)
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers['cache-control'], 'no-store')
      const body = res.json()
      assert.equal(body.tokenType, 'Bearer')
      assert.equal(body.expiresIn, 900)
      assert.match(body.refreshToken, /^srt_[0-9A-Za-z]{43}$/)
      assert.deepEqual(body.user, { id: user.id, siteRole: 'admin' })
      const header = decodeProtectedHeader(body.accessToken)
      assert.equal(header.alg, 'ES256')
      const claims = decodeJwt(body.accessToken)
      assert.equal(claims.iss, 'sitegrid-site-local')
      assert.ok(claims.iss!.endsWith('-local'))
      assert.equal(claims.sub, user.id)
      assert.equal(claims.org, org.id)
      assert.equal(claims.site_role, 'admin')
      assert.equal(claims.exp! - claims.iat!, 900)
      assert.equal(claims.oid, undefined)
      assert.equal(claims.role, undefined)
      assert.ok(
        !h.rawLogs().includes(user.pin) && !h.rawLogs().includes(body.refreshToken) && !h.rawLogs().includes(body.accessToken),
        'no PIN or token in the log',
      )
    })

    it('an unknown e-mail and a wrong PIN get the same 401 (status, body, headers) as any bad credential', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const user = await addSiteUser(h, org)
      const unknown = await login(h, org, 'nobody@plant.example', user.pin, '10.1.0.1')
      const wrong = await login(h, org, user.email, user.pin === '999999' ? '999998' : '999999', '10.1.0.2')
      const notDigits = await login(h, org, user.email, 'abcdef', '10.1.0.3')
      const noCredential = await h.inject(undefined, { url: '/api/site/users', host: `${org.slug}.localhost` })
      for (const res of [unknown, wrong, notDigits]) {
        assert.equal(res.statusCode, 401)
        assert.equal(res.json().code, 'Unauthorized')
        assert.deepEqual(comparableBody(res.body), comparableBody(noCredential.body))
        assert.deepEqual(comparableHeaders(res.headers), comparableHeaders(unknown.headers))
      }
    })

    it("a sign-in at another organisation's host, or at an unknown host, is the uniform 401", async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const a = await h.createOrg()
      const b = await h.createOrg()
      const user = await addSiteUser(h, a)
      assert.equal((await login(h, b, user.email, user.pin)).statusCode, 401)
      const unknownHost = await h.app.inject({
        method: 'POST',
        url: '/auth/site/login',
        headers: { host: 'nobody.localhost' },
        payload: { email: user.email, pin: user.pin },
      })
      assert.equal(unknownHost.statusCode, 401)
    })

    it('the body is validated strictly: missing fields and unknown properties are 400s naming them', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const res = await h.app.inject({
        method: 'POST',
        url: '/auth/site/login',
        headers: { host: `${org.slug}.localhost` },
        payload: { email: 'a@b.c', pinn: '123456' },
      })
      assert.equal(res.statusCode, 400)
      const pointers = res
        .json()
        .errors.map((e: { pointer: string }) => e.pointer)
        .sort()
      assert.deepEqual(pointers, ['/pin', '/pinn'])
    })
  })
}
