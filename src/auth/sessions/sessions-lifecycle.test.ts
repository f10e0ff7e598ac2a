import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { decodeJwt } from 'jose'
import { comparableBody, testDialects } from '../../../test/harness.ts'
import { postSession, setCookies, signIn } from '../../../test/oidc/browser-flow.ts'
import { identityHarness, startSharedProvider, type SharedProvider } from '../../../test/oidc/identity-harness.ts'
import { SESSION_COOKIE } from './cookies.ts'

let shared: SharedProvider
before(async () => {
  shared = await startSharedProvider()
})
after(() => shared.stop())

for (const dialect of testDialects()) {
  describe(`${dialect}: browser sessions (spec 5 rule 6): token, refresh, logout, revocation`, () => {
    it('/auth/token and /auth/logout check Origin (403 when missing, null or foreign) and leave the session alone', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'member')
      const { session } = await signIn(h, 'ada')
      for (const headers of [
        {},
        { origin: 'null' },
        { origin: 'https://evil.example' },
        { origin: `https://${h.org.slug}.localhost.evil.example` },
        { origin: `http://${h.org.slug}.localhost` },
      ] as Array<Record<string, string>>) {
        assert.equal((await postSession(h, '/auth/token', session, headers)).statusCode, 403)
        assert.equal((await postSession(h, '/auth/logout', session, headers)).statusCode, 403)
      }
      assert.equal((await postSession(h, '/auth/token', session)).statusCode, 200, 'the session survived the refused logouts')
    })

    it('logout deletes the session and clears the cookie; it is idempotent; the token endpoint then answers the uniform 401', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'member')
      const { session } = await signIn(h, 'ada')
      const out = await postSession(h, '/auth/logout', session)
      assert.equal(out.statusCode, 204)
      assert.match(setCookies(out).get(SESSION_COOKIE)!, /Max-Age=0/)
      assert.equal((await postSession(h, '/auth/logout', session)).statusCode, 204)
      assert.equal((await postSession(h, '/auth/logout', undefined)).statusCode, 204)
      const after = await postSession(h, '/auth/token', session)
      const none = await postSession(h, '/auth/token', undefined)
      assert.equal(after.statusCode, 401)
      assert.deepEqual(comparableBody(after.body), comparableBody(none.body))
      assert.equal((await h.handle.db.selectFrom('sessions').select('id').where('org_id', '=', h.org.id).execute()).length, 0)
    })

    it('the token is refreshed at the provider when it is about to expire, for the same subject', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'member')
      const { session } = await signIn(h, 'ada')
      const first = (await postSession(h, '/auth/token', session)).json()
      assert.equal((await postSession(h, '/auth/token', session)).json().accessToken, first.accessToken, 'no refresh while the token is fresh')
      h.clock.set(Date.parse(first.expiresAt) - 30_000)
      const renewed = await postSession(h, '/auth/token', session)
      assert.equal(renewed.statusCode, 200, renewed.body)
      assert.notEqual(renewed.json().accessToken, first.accessToken)
      assert.equal(decodeJwt(renewed.json().accessToken).sub, decodeJwt(first.accessToken).sub)
      assert.ok(Date.parse(renewed.json().expiresAt) > Date.parse(first.expiresAt))
    })

    it('a session past its 12-hour lifetime is the uniform 401', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'member')
      const { session } = await signIn(h, 'ada')
      h.clock.advance(12 * 3_600_000 + 1)
      assert.equal((await postSession(h, '/auth/token', session)).statusCode, 401)
    })

    it('revoking a member ends its sessions at once: /auth/token answers 401', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'owner')
      await h.activate('mo', 'member')
      const { session } = await signIn(h, 'mo')
      assert.equal((await postSession(h, '/auth/token', session)).statusCode, 200)
      const revoke = await h.bearer(await h.token('ada'), { method: 'DELETE', url: `/api/admin/orgs/${h.org.slug}/members/${h.oidOf('mo')}` })
      assert.equal(revoke.statusCode, 204)
      assert.equal((await postSession(h, '/auth/token', session)).statusCode, 401)
    })

    it("a session cookie of one organisation does not work at another organisation's host", async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'member')
      const other = await h.createOrg()
      const { session } = await signIn(h, 'ada')
      const res = await h.inject(
        { org: other },
        { method: 'POST', url: '/auth/token', headers: { origin: `https://${other.slug}.localhost`, cookie: `${SESSION_COOKIE}=${session}` } },
      )
      assert.equal(res.statusCode, 401)
    })
  })
}
