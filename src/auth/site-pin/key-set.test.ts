import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeProtectedHeader } from 'jose'
import { harness, testDialects } from '../../../test/harness.ts'
import { CHEAP_PINS, addSiteUser, signedIn } from '../../../test/site/support.ts'
import { createSiteUsersService } from '../../modules/site-users/service.ts'
import { issueAccessToken } from './access-token.ts'
import { unseal } from './seal.ts'
import { createSigningKeys } from './signing-keys.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: the local key set and rotation`, () => {
    it('GET /.well-known/jwks.json needs no credential and serves public EC members only', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const s = await signedIn(h, org)
      const res = await h.inject(undefined, { url: '/.well-known/jwks.json', host: `${org.slug}.localhost` })
      assert.equal(res.statusCode, 200)
      const { keys } = res.json()
      assert.equal(keys.length, 1)
      assert.deepEqual(Object.keys(keys[0]).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y'])
      assert.equal(keys[0].kid, decodeProtectedHeader(s.accessToken).kid)
      assert.equal(keys[0].d, undefined)
      assert.equal((await h.inject(undefined, { url: '/.well-known/jwks.json', host: 'nobody.localhost' })).statusCode, 404)
    })

    it('the private key is sealed in the database (never stored, served or logged in the clear)', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      await signedIn(h, org)
      const rows = await h.handle.db.selectFrom('site_signing_keys').selectAll().where('org_id', '=', org.id).execute()
      assert.equal(rows.length, 1)
      const opened = unseal(h.config.keySecret!, rows[0]!.sealed_private_jwk, `${org.id}:${rows[0]!.kid}`)
      const d = (JSON.parse(opened!) as { d: string }).d
      assert.ok(d.length > 20)
      assert.equal(unseal(Buffer.alloc(32, 7), rows[0]!.sealed_private_jwk, `${org.id}:${rows[0]!.kid}`), undefined, 'another secret cannot open it')
      assert.ok(!JSON.stringify(rows).includes(d))
      assert.ok(!h.rawLogs().includes(d))
      assert.ok(!(await h.inject(undefined, { url: '/.well-known/jwks.json', host: `${org.slug}.localhost` })).body.includes(d))
    })

    it('rotation signs new tokens with the new key and keeps the old key valid until its tokens expire, then drops it', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const before = await signedIn(h, org, 'admin')
      const oldKid = decodeProtectedHeader(before.accessToken).kid
      const keys = createSigningKeys({ handle: h.handle, clock: h.clock, keySecret: h.config.keySecret! })
      const newKid = await keys.rotate(org.id)
      assert.notEqual(newKid, oldKid)
      const after = await signedIn(h, org, 'admin')
      assert.equal(decodeProtectedHeader(after.accessToken).kid, newKid)
      const jwks = async () =>
        (await h.inject(undefined, { url: '/.well-known/jwks.json', host: `${org.slug}.localhost` }))
          .json()
          .keys.map((k: { kid: string }) => k.kid)
          .sort()
      assert.deepEqual(await jwks(), [oldKid, newKid].sort())
      assert.equal((await h.inject({ org, bearer: before.accessToken }, { url: '/api/site/users' })).statusCode, 200, 'old token still verifies')
      h.clock.advance(15 * 60_000 + 31_000)
      assert.deepEqual(await jwks(), [newKid])
      assert.equal((await h.inject({ org, bearer: after.accessToken }, { url: '/api/site/users' })).statusCode, 401, 'access tokens expire after 15 minutes')
      const refreshed = await h.app.inject({
        method: 'POST',
        url: '/auth/site/refresh',
        headers: { host: `${org.slug}.localhost` },
        payload: { refreshToken: before.refreshToken },
      })
      assert.equal(refreshed.statusCode, 200)
      assert.equal(decodeProtectedHeader(refreshed.json().accessToken).kid, newKid)
    })

    it("signing keys are per organisation: a token signed with organisation A's key does not verify at B", async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const a = await h.createOrg()
      const b = await h.createOrg()
      const bUser = await addSiteUser(h, b, 'owner')
      const siteUsers = createSiteUsersService({ handle: h.handle, clock: h.clock })
      const keys = createSigningKeys({ handle: h.handle, clock: h.clock, keySecret: h.config.keySecret! })
      const state = (await siteUsers.credentialState(b.id, bUser.id))!
      const { token } = await issueAccessToken(await keys.current(a.id), b, state, h.clock.now())
      assert.equal((await h.inject({ org: b, bearer: token }, { url: '/api/site/users' })).statusCode, 401)
    })
  })
}
