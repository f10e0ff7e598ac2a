import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { harness, testDialects } from '../../../test/harness.ts'
import { identityHarness, startSharedProvider, type SharedProvider } from '../../../test/oidc/identity-harness.ts'
import { CHEAP_PINS, signedIn } from '../../../test/site/support.ts'

const FIELDS = ['email', 'id', 'isPlatformAdmin', 'kind', 'mode', 'name', 'networks', 'orgSlug', 'role', 'siteId']

for (const dialect of testDialects()) {
  describe(`${dialect}: GET /api/me`, () => {
    let shared: SharedProvider
    before(async () => {
      shared = await startSharedProvider({ slots: 4 })
    })
    after(() => shared.stop())

    it("an API key: its kind, id, role and name, the host's organisation and the mode; never cached", async (t) => {
      const h = await harness(t, dialect)
      const org = await h.createOrg()
      const { plaintext, keyId } = await h.mintKey(org, 'admin', { name: 'edge gateway 3' })
      const res = await h.inject({ org, apiKey: plaintext }, { url: '/api/me' })
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(Object.keys(res.json()).sort(), FIELDS)
      assert.deepEqual(res.json(), {
        kind: 'apiKey',
        id: keyId,
        role: 'admin',
        isPlatformAdmin: false,
        name: 'edge gateway 3',
        email: null,
        orgSlug: org.slug,
        mode: 'site',
        siteId: null,
        networks: null,
      })
      assert.equal(res.headers['cache-control'], 'no-store')
    })

    it('a member key is enough (policy member); no credential or a revoked key is the uniform 401', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      const member = await h.mintKey(org, 'member')
      assert.equal((await h.inject({ org, apiKey: member.plaintext }, { url: '/api/me' })).json().role, 'member')
      assert.equal((await h.inject({ org }, { url: '/api/me' })).statusCode, 401)
      const revoke = await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/api-keys/${member.keyId}`, payload: { reason: 'test' } })
      assert.equal(revoke.statusCode, 204)
      assert.equal((await h.inject({ org, apiKey: member.plaintext }, { url: '/api/me' })).statusCode, 401)
    })

    it('a site-PIN user: kind sitePin, its id, site role, display name and e-mail', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const { user, accessToken } = await signedIn(h, org, 'member')
      const res = await h.inject({ org, bearer: accessToken }, { url: '/api/me' })
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(res.json(), {
        kind: 'sitePin',
        id: user.id,
        role: 'member',
        isPlatformAdmin: false,
        name: 'member user',
        email: user.email,
        orgSlug: org.slug,
        mode: 'site',
        siteId: null,
        networks: null,
      })
    })

    it('a signed-in user (cloud): the account id (oid, not the pairwise sub), organisation role, name and e-mail from the membership', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'admin')
      const res = await h.bearer(await h.token('ada'), { method: 'GET', url: '/api/me' })
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(res.json(), {
        kind: 'user',
        id: h.oidOf('ada'),
        role: 'admin',
        isPlatformAdmin: false,
        name: 'User ada',
        email: 'ada@example.test',
        orgSlug: h.org.slug,
        mode: 'cloud',
        siteId: null,
        networks: null,
      })
    })

    it('a signed-in account whose membership is pending gets 403 (the console shows "awaiting approval"); a platform admin is flagged', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      const pending = await h.bearer(await h.token('bob'), { method: 'GET', url: '/api/me' })
      assert.equal(pending.statusCode, 403)
      assert.equal(pending.json().code, 'Forbidden')
      await h.makePlatformAdmin('root')
      const admin = await h.bearer(await h.token('root'), { method: 'GET', url: '/api/me' })
      assert.equal(admin.statusCode, 200, admin.body)
      assert.equal(admin.json().isPlatformAdmin, true)
      assert.equal(admin.json().kind, 'user')
    })

    it('is described in the OpenAPI document with its schema and problems', async (t) => {
      const h = await harness(t, dialect)
      const doc = (await h.inject(undefined, { url: '/openapi.json' })).json() as {
        paths: Record<string, { get?: { responses: Record<string, unknown>; description?: string } }>
      }
      const op = doc.paths['/api/me']?.get
      assert.ok(op, '/api/me is in the document')
      assert.deepEqual(Object.keys(op.responses).sort(), ['200', '400', '401', '403', '429'])
      assert.match(op.description ?? '', /Policy: any member/)
    })
  })
}
