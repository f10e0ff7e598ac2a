import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../harness.ts'
import { CHEAP_PINS, signedIn } from '../site/support.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: the Authorization header's scheme`, () => {
    it('the scheme is case-insensitive and may be followed by several spaces (RFC 9110 §11.1, §11.4); anything else stays the uniform 401', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const { accessToken } = await signedIn(h, org, 'admin')
      const me = (authorization: string) => h.inject({ org }, { url: '/api/me', headers: { authorization } })
      for (const authorization of [
        `Bearer ${accessToken}`,
        `bearer ${accessToken}`,
        `BEARER ${accessToken}`,
        `bEaReR ${accessToken}`,
        `Bearer   ${accessToken}`,
      ]) {
        const res = await me(authorization)
        assert.equal(res.statusCode, 200, authorization.slice(0, 12))
        assert.equal(res.json().kind, 'sitePin')
      }
      for (const authorization of [
        `Bearer${accessToken}`,
        `Bearer\t${accessToken}`,
        `Basic ${accessToken}`,
        `Bearers ${accessToken}`,
        `Bearer ${accessToken} x`,
        accessToken,
      ]) {
        const res = await me(authorization)
        assert.equal(res.statusCode, 401, authorization.slice(0, 12))
        assert.equal(res.json().code, 'Unauthorized')
      }
    })
  })
}
