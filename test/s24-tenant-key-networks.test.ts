// Session 24 (part HQ): a key restricted to client networks must not make itself a key that works from anywhere.
// Before, an admin key restricted to a gateway's LAN minted an unrestricted admin key (or one for any network), so
// whoever held it inside the LAN walked out with a credential the restriction no longer bound.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Unauthorized } from '../src/errors/domain-error.ts'
import { CLI_ACTOR } from '../src/identity.ts'
import { createApiKeysService } from '../src/modules/api-keys/service.ts'
import { harness, testDialects } from './harness.ts'

const DAY = 86_400_000

for (const dialect of testDialects()) {
  describe(`${dialect}: a network-restricted API key mints no key wider than itself`, () => {
    it("a key restricted to 10.20.0.0/16 mints keys only inside it (403 naming /networks or /networks/i otherwise, nothing minted); a narrower or equal block is minted; an unrestricted key's mints are unchanged", async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('owner')
      const owner = { org, apiKey: key }
      const mint = (as: typeof owner, networks: string[] | undefined, remoteAddress = '10.20.1.5') =>
        h.inject(as, {
          method: 'POST',
          url: '/api/admin/api-keys',
          remoteAddress,
          payload: { role: 'admin', name: 'probe', expiresAt: new Date(h.clock.now() + 30 * DAY).toISOString(), ...(networks ? { networks } : {}) },
        })
      const restricted = await mint(owner, ['10.20.0.0/16'])
      assert.equal(restricted.statusCode, 201)
      const lan = { org, apiKey: restricted.json().plaintext as string }
      const count = async () => ((await h.inject(owner, { url: '/api/admin/api-keys' })).json() as unknown[]).length
      const keysBefore = await count()

      const wider: Array<[string[] | undefined, string]> = [
        [undefined, '/networks'],
        [['0.0.0.0/0'], '/networks/0'],
        [['10.20.0.0/8'], '/networks/0'],
        [['10.21.0.0/16'], '/networks/0'],
        [['10.20.0.0/24', '10.21.0.0/16'], '/networks/1'],
        // The pointer names the block as sent, duplicates counted.
        [['10.20.0.0/24', '10.20.0.0/24', '10.21.0.0/16'], '/networks/2'],
        [['2001:db8::/32'], '/networks/0'],
        [['::ffff:10.20.0.0/100'], '/networks/0'],
      ]
      const refusals: string[] = []
      for (const [networks, pointer] of wider) {
        const res = await mint(lan, networks)
        const body = res.json() as { code?: string; errors?: Array<{ pointer: string }> }
        if (res.statusCode !== 403 || body.code !== 'Forbidden' || body.errors?.[0]?.pointer !== pointer)
          refusals.push(`${JSON.stringify(networks)}: ${res.statusCode} ${res.body.slice(0, 200)}`)
      }
      assert.deepEqual(refusals, [])
      assert.equal(await count(), keysBefore, 'a refused mint stores no key')

      for (const networks of [['10.20.0.0/16'], ['10.20.5.0/24', '10.20.9.9']]) {
        const res = await mint(lan, networks)
        assert.equal(res.statusCode, 201, res.body)
        assert.deepEqual(
          res.json().networks,
          networks.map((n) => (n.includes('/') ? n : `${n}/32`)),
        )
      }
      // An unrestricted key (the owner's) still mints any restriction or none, from anywhere.
      assert.equal((await mint(owner, undefined, '192.0.2.1')).statusCode, 201)
      assert.equal((await mint(owner, ['0.0.0.0/0'], '192.0.2.1')).statusCode, 201)

      // A caller key revoked after it was verified (by another request or process) mints nothing, not even unrestricted.
      const apiKeys = createApiKeysService({ handle: h.handle, clock: h.clock, keySecret: h.config.keySecret })
      const gone = await h.mintKey(org, 'admin')
      await apiKeys.revoke(org.id, CLI_ACTOR, gone.keyId, null)
      const before = await count()
      const minting = apiKeys.mint(
        org.id,
        { kind: 'apiKey', subject: gone.keyId, role: 'admin' },
        { role: 'member', name: 'late', expiresAt: new Date(h.clock.now() + DAY).toISOString() },
      )
      await assert.rejects(minting, (err: unknown) => err instanceof Unauthorized)
      assert.equal(await count(), before)
    })
  })
}
