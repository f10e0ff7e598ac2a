import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { testDialects } from '../harness.ts'
import { identityHarness, startSharedProvider, type SharedProvider } from './identity-harness.ts'

let shared: SharedProvider
before(async () => {
  shared = await startSharedProvider({ slots: 4 })
})
after(() => shared.stop())

for (const dialect of testDialects()) {
  describe(`${dialect}: API keys minted by a platform admin (spec 4.1 rule 2)`, () => {
    it('a verified platform admin mints a key of any organisation role, also while a member of the organisation with a lower role; an admin stays capped', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.makePlatformAdmin('root')
      await h.activate('root', 'member')
      await h.activate('ada', 'admin')
      const mint = async (who: string, role: string) =>
        h.bearer(await h.token(who), {
          method: 'POST',
          url: '/api/admin/api-keys',
          payload: { role, name: `${who} ${role}`, expiresAt: new Date(h.clock.now() + 86_400_000).toISOString() },
        })
      for (const role of ['owner', 'admin', 'member']) {
        const res = await mint('root', role)
        assert.equal(res.statusCode, 201, `${role}: ${res.body}`)
        assert.equal(res.json().role, role)
      }
      const capped = await mint('ada', 'owner')
      assert.equal(capped.statusCode, 403)
      assert.equal(capped.json().code, 'Forbidden')
      assert.equal((await mint('ada', 'admin')).statusCode, 201)
    })
  })
}
