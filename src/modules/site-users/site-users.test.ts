import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../../test/harness.ts'
import { CHEAP_PINS, addSiteUser, login, newUserBody as newUser, signedIn, siteUserRows as userRows } from '../../../test/site/support.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: site users over HTTP`, () => {
    it('PINs must be 6 to 12 digits; roles must be owner, admin or member (400 naming the field, nothing created)', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const owner = await signedIn(h, org, 'owner')
      for (const [extra, pointer] of [
        [{ pin: '12345' }, '/pin'],
        [{ pin: '1234567890123' }, '/pin'],
        [{ pin: '12ab56' }, '/pin'],
        [{ siteRole: 'platform_admin' }, '/siteRole'],
        [{ extra: 1 }, '/extra'],
      ] as const) {
        const res = await h.inject({ org, bearer: owner.accessToken }, { method: 'POST', url: '/api/site/users', payload: newUser('member', extra) })
        assert.equal(res.statusCode, 400, JSON.stringify(extra))
        assert.ok(
          res.json().errors.some((e: { pointer: string }) => e.pointer === pointer),
          JSON.stringify(res.json().errors),
        )
      }
      assert.equal((await userRows(h, org)).length, 1)
    })

    it('a display name of spaces only is a 400 naming /displayName on add and rename (it was stored trimmed to an empty name)', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const owner = await signedIn(h, org, 'owner')
      const as = (method: 'POST' | 'PATCH', url: string, payload: object) => h.inject({ org, bearer: owner.accessToken }, { method, url, payload })
      const added = await as('POST', '/api/site/users', newUser('member', { displayName: ' \t ' }))
      assert.equal(added.statusCode, 400, added.body)
      assert.deepEqual(added.json().errors[0].pointer, '/displayName')
      assert.equal((await userRows(h, org)).length, 1)
      const renamed = await as('PATCH', `/api/site/users/${owner.user.id}`, { displayName: '   ' })
      assert.equal(renamed.statusCode, 400, renamed.body)
      assert.deepEqual(renamed.json().errors[0].pointer, '/displayName')
      assert.equal((await userRows(h, org))[0]!.display_name, 'owner user')
      const trimmed = await as('POST', '/api/site/users', newUser('member', { displayName: '  Ada  ' }))
      assert.equal(trimmed.json().displayName, 'Ada')
    })

    it('a duplicate e-mail (any case) is 409 Conflict and changes nothing', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const owner = await signedIn(h, org, 'owner')
      const res = await h.inject(
        { org, bearer: owner.accessToken },
        { method: 'POST', url: '/api/site/users', payload: newUser('member', { email: owner.user.email.toUpperCase() }) },
      )
      assert.equal(res.statusCode, 409)
      assert.equal(res.json().code, 'Conflict')
      assert.equal((await userRows(h, org)).length, 1)
    })

    it('list is paged by e-mail with limit and cursor; read, rename, set PIN and remove work and are audited', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const owner = await signedIn(h, org, 'owner')
      for (let i = 0; i < 4; i++) await addSiteUser(h, org, 'member', { email: `m${i}@plant.example` })
      const first = (await h.inject({ org, bearer: owner.accessToken }, { url: '/api/site/users?limit=3' })).json()
      assert.deepEqual(
        first.items.map((u: { email: string }) => u.email),
        ['m0@plant.example', 'm1@plant.example', 'm2@plant.example'],
      )
      const second = (await h.inject({ org, bearer: owner.accessToken }, { url: `/api/site/users?limit=3&cursor=${first.nextCursor}` })).json()
      assert.deepEqual(
        second.items.map((u: { email: string }) => u.email),
        ['m3@plant.example', owner.user.email],
      )
      assert.equal(second.nextCursor, null)
      assert.equal((await h.inject({ org, bearer: owner.accessToken }, { url: '/api/site/users?cursor=bogus' })).statusCode, 400)
      const target = first.items[0].id as string
      assert.equal((await h.inject({ org, bearer: owner.accessToken }, { url: `/api/site/users/${target}` })).json().email, 'm0@plant.example')
      const renamed = await h.inject(
        { org, bearer: owner.accessToken },
        { method: 'PATCH', url: `/api/site/users/${target}`, payload: { displayName: 'Crusher operator' } },
      )
      assert.equal(renamed.json().displayName, 'Crusher operator')
      assert.equal(
        (await h.inject({ org, bearer: owner.accessToken }, { method: 'PUT', url: `/api/site/users/${target}/pin`, payload: { pin: '86420000' } })).statusCode,
        204,
      )
      assert.equal((await login(h, org, 'm0@plant.example', '86420000')).statusCode, 200)
      assert.equal((await h.inject({ org, bearer: owner.accessToken }, { method: 'DELETE', url: `/api/site/users/${target}` })).statusCode, 204)
      assert.equal((await h.inject({ org, bearer: owner.accessToken }, { url: `/api/site/users/${target}` })).statusCode, 404)
      const actions = await h.handle.db
        .selectFrom('audit_events')
        .select(['action', 'actor_id'])
        .where('org_id', '=', org.id)
        .where('target', '=', target)
        .orderBy('at')
        .orderBy('id')
        .execute()
      // The test clock stands still, so the four rows share one timestamp: compare them as a set.
      assert.deepEqual(actions.map((a) => a.action).sort(), ['site_user.created', 'site_user.pin_set', 'site_user.removed', 'site_user.updated'])
      assert.ok(actions.filter((a) => a.action !== 'site_user.created').every((a) => a.actor_id === owner.user.id))
    })

    it("an owner API key manages site users too (site role = the key's role)", async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const { org, key } = await h.orgWithKey('owner')
      const res = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/site/users', payload: newUser('owner') })
      assert.equal(res.statusCode, 201)
    })
  })
}
