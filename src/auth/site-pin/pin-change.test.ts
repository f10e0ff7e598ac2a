import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../../test/harness.ts'
import { CHEAP_PINS, login, refresh, signedIn } from '../../../test/site/support.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: site-PIN refresh`, () => {
    it('a new PIN ends every earlier session: the access token at once, the refresh token at its next use', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const admin = await signedIn(h, org, 'owner')
      const member = await signedIn(h, org, 'member')
      const set = await h.inject(
        { org, bearer: admin.accessToken },
        { method: 'PUT', url: `/api/site/users/${member.user.id}/pin`, payload: { pin: '7777777' } },
      )
      assert.equal(set.statusCode, 204)
      assert.equal((await h.inject({ org, bearer: member.accessToken }, { url: '/api/admin/api-keys' })).statusCode, 401)
      assert.equal((await refresh(h, org, member.refreshToken)).statusCode, 401)
      assert.equal((await login(h, org, member.user.email, member.user.pin, '10.9.0.1')).statusCode, 401)
      assert.equal((await login(h, org, member.user.email, '7777777', '10.9.0.2')).statusCode, 200)
    })
  })

  describe(`${dialect}: changing one's own PIN`, () => {
    it('any site user changes their own PIN with the current one; old sessions end, the new PIN signs in', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const member = await signedIn(h, org, 'member')
      const change = (pin: string, newPin: string, remoteAddress = '10.7.0.1') =>
        h.app.inject({
          method: 'POST',
          url: '/auth/site/pin',
          remoteAddress,
          headers: { host: `${org.slug}.localhost` },
          payload: { email: member.user.email, pin, newPin },
        })
      const wrong = await change('000000', '55554444')
      assert.equal(wrong.statusCode, 401)
      assert.equal((await change(member.user.pin, '123')).statusCode, 400, 'the new PIN must be 6 to 12 digits')
      assert.equal((await login(h, org, member.user.email, member.user.pin, '10.7.0.2')).statusCode, 200, 'nothing changed so far')
      assert.equal((await change(member.user.pin, '55554444')).statusCode, 204)
      assert.equal((await h.inject({ org, bearer: member.accessToken }, { url: '/api/admin/api-keys' })).statusCode, 401)
      assert.equal((await refresh(h, org, member.refreshToken)).statusCode, 401)
      assert.equal((await login(h, org, member.user.email, '55554444', '10.7.0.3')).statusCode, 200)
    })
  })
}
