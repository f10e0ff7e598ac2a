import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../../test/harness.ts'
import { CHEAP_PINS, addSiteUser, newUserBody as newUser, signedIn, siteUserRows as userRows } from '../../../test/site/support.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: site users over HTTP`, () => {
    it('site members are refused (403) on every site-user endpoint and change nothing', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const member = await signedIn(h, org, 'member')
      const before = await userRows(h, org)
      const id = member.user.id
      for (const [method, url, payload] of [
        ['GET', '/api/site/users', undefined],
        ['POST', '/api/site/users', newUser('member')],
        ['GET', `/api/site/users/${id}`, undefined],
        ['PATCH', `/api/site/users/${id}`, { siteRole: 'owner' }],
        ['PUT', `/api/site/users/${id}/pin`, { pin: '999999' }],
        ['DELETE', `/api/site/users/${id}`, undefined],
      ] as const) {
        const res = await h.inject({ org, bearer: member.accessToken }, { method, url, ...(payload ? { payload } : {}) })
        assert.equal(res.statusCode, 403, `${method} ${url}`)
      }
      assert.deepEqual(await userRows(h, org), before)
    })

    it('nobody raises a user above their own role or manages a user ranked above them (403, nothing changed)', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const owner = await addSiteUser(h, org, 'owner')
      const admin = await signedIn(h, org, 'admin')
      const member = await addSiteUser(h, org, 'member')
      const before = await userRows(h, org)
      const as = (method: 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object) =>
        h.inject({ org, bearer: admin.accessToken }, { method, url, ...(payload ? { payload } : {}) })
      assert.equal((await as('POST', '/api/site/users', newUser('owner'))).statusCode, 403)
      assert.equal((await as('PATCH', `/api/site/users/${member.id}`, { siteRole: 'owner' })).statusCode, 403)
      assert.equal((await as('PATCH', `/api/site/users/${admin.user.id}`, { siteRole: 'owner' })).statusCode, 403, 'not even oneself')
      assert.equal((await as('PATCH', `/api/site/users/${owner.id}`, { siteRole: 'member' })).statusCode, 403)
      assert.equal((await as('PUT', `/api/site/users/${owner.id}/pin`, { pin: '000000' })).statusCode, 403)
      assert.equal((await as('DELETE', `/api/site/users/${owner.id}`)).statusCode, 403)
      assert.deepEqual(await userRows(h, org), before)
      assert.equal(
        (await as('PATCH', `/api/site/users/${member.id}`, { siteRole: 'admin', displayName: 'Shift lead' })).statusCode,
        200,
        'up to their own role is fine',
      )
      assert.equal((await as('POST', '/api/site/users', newUser('admin'))).statusCode, 201)
    })

    it('the last owner can be neither removed nor demoted (409), and can be once another owner exists', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const owner = await signedIn(h, org, 'owner')
      const { plaintext } = await h.mintKey(org, 'owner')
      const removed = await h.inject({ org, bearer: owner.accessToken }, { method: 'DELETE', url: `/api/site/users/${owner.user.id}` })
      assert.equal(removed.statusCode, 409)
      assert.equal(removed.json().code, 'Conflict')
      const demoted = await h.inject({ org, apiKey: plaintext }, { method: 'PATCH', url: `/api/site/users/${owner.user.id}`, payload: { siteRole: 'admin' } })
      assert.equal(demoted.statusCode, 409)
      assert.equal((await userRows(h, org))[0]!.site_role, 'owner')
      const second = await addSiteUser(h, org, 'owner')
      assert.equal((await h.inject({ org, bearer: owner.accessToken }, { method: 'DELETE', url: `/api/site/users/${owner.user.id}` })).statusCode, 204)
      assert.deepEqual(
        (await userRows(h, org)).map((r) => r.id),
        [second.id],
      )
    })

    it("another organisation's site user reads, changes and deletes as the uniform 404 and is untouched", async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const a = await h.createOrg()
      const b = await h.createOrg()
      const ownerB = await signedIn(h, b, 'owner')
      const victim = await addSiteUser(h, a, 'member')
      const before = await userRows(h, a)
      const absent = await h.inject({ org: b, bearer: ownerB.accessToken }, { url: '/api/site/users/su_doesnotexist' })
      for (const [method, url, payload] of [
        ['GET', `/api/site/users/${victim.id}`, undefined],
        ['PATCH', `/api/site/users/${victim.id}`, { displayName: 'x' }],
        ['PUT', `/api/site/users/${victim.id}/pin`, { pin: '111111' }],
        ['DELETE', `/api/site/users/${victim.id}`, undefined],
      ] as const) {
        const res = await h.inject({ org: b, bearer: ownerB.accessToken }, { method, url, ...(payload ? { payload } : {}) })
        assert.equal(res.statusCode, 404, `${method} ${url}`)
        assert.equal(res.json().detail, absent.json().detail)
      }
      const list = (await h.inject({ org: b, bearer: ownerB.accessToken }, { url: '/api/site/users' })).json()
      assert.deepEqual(
        list.items.map((u: { id: string }) => u.id),
        [ownerB.user.id],
      )
      assert.deepEqual(await userRows(h, a), before)
    })
  })
}
