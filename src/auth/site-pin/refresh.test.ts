import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../../test/harness.ts'
import { CHEAP_PINS, refresh, signedIn } from '../../../test/site/support.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: site-PIN refresh`, () => {
    it('refresh renews without the PIN and rotates the refresh token; the new access token works', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const s = await signedIn(h, org, 'admin')
      h.clock.advance(10 * 60_000)
      const res = await refresh(h, org, s.refreshToken)
      assert.equal(res.statusCode, 200)
      const next = res.json()
      assert.notEqual(next.refreshToken, s.refreshToken)
      assert.notEqual(next.accessToken, s.accessToken)
      h.clock.advance(10 * 60_000) // the first access token is now past its 15 minutes
      assert.equal((await h.inject({ org, bearer: s.accessToken }, { url: '/api/site/users' })).statusCode, 401)
      assert.equal((await h.inject({ org, bearer: next.accessToken }, { url: '/api/site/users' })).statusCode, 200)
      assert.equal((await refresh(h, org, next.refreshToken)).statusCode, 200)
    })

    it('reusing a rotated refresh token revokes the whole family: the newest refresh token stops working too', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const s = await signedIn(h, org)
      const second = (await refresh(h, org, s.refreshToken)).json().refreshToken as string
      const third = (await refresh(h, org, second)).json().refreshToken as string
      const reuse = await refresh(h, org, s.refreshToken)
      assert.equal(reuse.statusCode, 401)
      assert.equal(reuse.json().code, 'Unauthorized')
      assert.equal((await refresh(h, org, third)).statusCode, 401, "the thief's or the owner's latest token is revoked as well")
      const rows = await h.handle.db.selectFrom('site_refresh_tokens').select(['revoked_at']).where('org_id', '=', org.id).execute()
      assert.ok(rows.length === 3 && rows.every((r) => r.revoked_at !== null))
      assert.ok(h.logs().some((l) => l.event === 'site_pin.refresh_family_revoked'))
      // Another sign-in (another family) is unaffected.
      const other = await signedIn(h, org)
      assert.equal((await refresh(h, org, other.refreshToken)).statusCode, 200)
    })

    it('refresh tokens are stored only as hashes', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const s = await signedIn(h, org)
      const rows = await h.handle.db.selectFrom('site_refresh_tokens').selectAll().where('org_id', '=', org.id).execute()
      assert.equal(rows.length, 1)
      assert.ok(!JSON.stringify(rows).includes(s.refreshToken.slice(4)))
      assert.match(rows[0]!.token_hash, /^[0-9a-f]{64}$/)
    })

    it('an expired, unknown, malformed or foreign refresh token is the uniform 401', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const other = await h.createOrg()
      const s = await signedIn(h, org)
      assert.equal((await refresh(h, other, s.refreshToken)).statusCode, 401, 'at another organisation')
      assert.equal((await refresh(h, org, `srt_${'a'.repeat(43)}`)).statusCode, 401)
      assert.equal((await refresh(h, org, 'garbage')).statusCode, 401)
      h.clock.advance(12 * 3_600_000)
      assert.equal((await refresh(h, org, s.refreshToken)).statusCode, 401, 'after 12 hours')
    })

    it("logout revokes the sign-in's refresh tokens", async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const s = await signedIn(h, org)
      const out = await h.app.inject({
        method: 'POST',
        url: '/auth/site/logout',
        headers: { host: `${org.slug}.localhost` },
        payload: { refreshToken: s.refreshToken },
      })
      assert.equal(out.statusCode, 204)
      assert.equal((await refresh(h, org, s.refreshToken)).statusCode, 401)
    })
  })
}
