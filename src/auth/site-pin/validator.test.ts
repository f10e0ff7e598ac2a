import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../../test/harness.ts'
import { CHEAP_PINS, signedIn } from '../../../test/site/support.ts'

const day = 86_400_000

for (const dialect of testDialects()) {
  describe(`${dialect}: the local (-local) bearer validator`, () => {
    it('the selector routes a -local bearer to the local validator: the principal is the site user with their site role', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const member = await signedIn(h, org, 'member')
      const admin = await signedIn(h, org, 'admin')
      assert.equal((await h.inject({ org, bearer: admin.accessToken }, { url: '/api/admin/api-keys' })).statusCode, 200)
      const refused = await h.inject({ org, bearer: member.accessToken }, { url: '/api/admin/api-keys' })
      assert.equal(refused.statusCode, 403, 'a site member is authenticated but not allowed to manage keys')
      assert.equal(refused.json().code, 'Forbidden')
    })

    it('an API key minted by a site-PIN principal records the site user as createdByUserId', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const s = await signedIn(h, org, 'admin')
      const minted = await h.inject(
        { org, bearer: s.accessToken },
        {
          method: 'POST',
          url: '/api/admin/api-keys',
          payload: { role: 'member', name: 'hmi', expiresAt: new Date(h.clock.now() + 30 * day).toISOString() },
        },
      )
      assert.equal(minted.statusCode, 201)
      const list = (await h.inject({ org, bearer: s.accessToken }, { url: '/api/admin/api-keys' })).json()
      assert.equal(list[0].createdByUserId, s.user.id)
      const audit = await h.handle.db
        .selectFrom('audit_events')
        .select(['actor_kind', 'actor_id'])
        .where('org_id', '=', org.id)
        .where('action', '=', 'api_key.minted')
        .execute()
      assert.deepEqual(audit, [{ actor_kind: 'sitePin', actor_id: s.user.id }])
      const tooHigh = await h.inject(
        { org, bearer: s.accessToken },
        {
          method: 'POST',
          url: '/api/admin/api-keys',
          payload: { role: 'owner', name: 'x', expiresAt: new Date(h.clock.now() + 30 * day).toISOString() },
        },
      )
      assert.equal(tooHigh.statusCode, 403, 'a site admin cannot mint an owner key')
    })

    it('a site-PIN principal, even a site owner, is refused organisation administration (orgAdmin policy) with 403', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      h.app.get('/test/org-admin', { config: { policy: 'orgAdmin' } }, async () => ({ ok: true }))
      const org = await h.createOrg()
      const s = await signedIn(h, org, 'owner')
      const { plaintext } = await h.mintKey(org, 'owner')
      const res = await h.inject({ org, bearer: s.accessToken }, { url: '/test/org-admin' })
      assert.equal(res.statusCode, 403)
      assert.equal(res.json().code, 'Forbidden')
      assert.equal((await h.inject({ org, apiKey: plaintext }, { url: '/test/org-admin' })).statusCode, 200, 'an owner API key passes the same route')
      // The organisation administration endpoints themselves (spec 4.5): refused before any handler runs.
      for (const url of [`/api/admin/orgs/${org.slug}/domains`, `/api/admin/orgs/${org.slug}/members`, `/api/admin/orgs/${org.slug}/audit`]) {
        const refused = await h.inject({ org, bearer: s.accessToken }, { url })
        assert.equal(refused.statusCode, 403, url)
      }
    })

    it("the token's role and existence are checked against the site user on every request: demotion and removal take effect at once", async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const owner = await signedIn(h, org, 'owner')
      const admin = await signedIn(h, org, 'admin')
      assert.equal((await h.inject({ org, bearer: admin.accessToken }, { url: '/api/admin/api-keys' })).statusCode, 200)
      await h.inject({ org, bearer: owner.accessToken }, { method: 'PATCH', url: `/api/site/users/${admin.user.id}`, payload: { siteRole: 'member' } })
      assert.equal((await h.inject({ org, bearer: admin.accessToken }, { url: '/api/admin/api-keys' })).statusCode, 403)
      await h.inject({ org, bearer: owner.accessToken }, { method: 'DELETE', url: `/api/site/users/${admin.user.id}` })
      assert.equal((await h.inject({ org, bearer: admin.accessToken }, { url: '/api/admin/api-keys' })).statusCode, 401)
    })
  })
}
