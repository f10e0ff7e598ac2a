import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { decodeProtectedHeader } from 'jose'
import { harness, testDialects } from '../../../test/harness.ts'
import { CHEAP_PINS, signedIn } from '../../../test/site/support.ts'
import { createSigningKeys } from './signing-keys.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: local signing keys`, () => {
    it('the key lives in the database: it survives a restart and another process sharing the database accepts its tokens', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const s = await signedIn(h, org, 'admin')
      const kid = decodeProtectedHeader(s.accessToken).kid!
      const again = createSigningKeys({ handle: h.handle, clock: h.clock, keySecret: h.config.keySecret! })
      assert.equal((await again.current(org.id)).kid, kid, 'a new instance finds the same key')
      assert.ok(await again.verificationKey(org.id, kid))
      assert.equal(await again.verificationKey(org.id, 'no-such-kid'), undefined)
    })

    it('a key sealed under another verifier secret is not used: a new key is made and the old one retires', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const before = createSigningKeys({ handle: h.handle, clock: h.clock, keySecret: randomBytes(32) })
      const oldKid = (await before.current(org.id)).kid
      const after = createSigningKeys({ handle: h.handle, clock: h.clock, keySecret: h.config.keySecret! })
      const fresh = await after.current(org.id)
      assert.notEqual(fresh.kid, oldKid)
      const rows = await h.handle.db.selectFrom('site_signing_keys').select(['kid', 'retired_at']).where('org_id', '=', org.id).execute()
      assert.deepEqual(
        rows.filter((r) => r.retired_at === null).map((r) => r.kid),
        [fresh.kid],
      )
    })

    it('a verifier secret shorter than 32 bytes is refused when the keys are built', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      assert.throws(() => createSigningKeys({ handle: h.handle, clock: h.clock, keySecret: Buffer.alloc(16) }), TypeError)
    })

    it('the sign-in endpoints and the key set are public in the OpenAPI document; the site-user endpoints are not', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const doc = (await h.inject(undefined, { url: '/openapi.json' })).json()
      for (const path of ['/auth/site/login', '/auth/site/refresh', '/auth/site/logout']) assert.deepEqual(doc.paths[path].post.security, [], path)
      assert.deepEqual(doc.paths['/.well-known/jwks.json'].get.security, [])
      assert.equal(doc.paths['/api/site/users'].post.security, undefined, "inherits the document's credential requirement")
      assert.ok(doc.paths['/api/site/users/{userId}/pin'].put)
    })
  })
}
