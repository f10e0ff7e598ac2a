import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { comparableBody, comparableHeaders, testDialects } from '../harness.ts'
import { forgedBearerTokens } from './forged-tokens.ts'
import { identityHarness, startSharedProvider, type IdentityHarness, type SharedProvider } from './identity-harness.ts'

const KEYS_URL = '/api/admin/api-keys'

/** The answer to a wrong API key at the same host: every bearer failure must look exactly like it. */
async function badKeyAnswer(h: IdentityHarness) {
  return h.inject({ org: h.org, apiKey: `csk_${'x'.repeat(32)}` }, { method: 'GET', url: KEYS_URL })
}

async function assertUniform401(h: IdentityHarness, token: string, message: string) {
  const res = await h.bearer(token, { method: 'GET', url: KEYS_URL })
  const reference = await badKeyAnswer(h)
  assert.equal(res.statusCode, 401, `${message}: ${res.body}`)
  assert.deepEqual(comparableBody(res.body), comparableBody(reference.body), message)
  assert.deepEqual(comparableHeaders(res.headers), comparableHeaders(reference.headers), message)
}

let shared: SharedProvider
before(async () => {
  shared = await startSharedProvider()
})
after(() => shared.stop())

for (const dialect of testDialects()) {
  describe(`${dialect}: OIDC bearer tokens: forged, expired and rotated keys`, () => {
    it('forged and invalid tokens get the uniform 401, identical to a bad API key, and record nothing', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'owner')
      for (const [kind, token] of Object.entries(await forgedBearerTokens(h, 'ada'))) await assertUniform401(h, token, kind)
      const rows = await h.handle.db.selectFrom('memberships').select('account_id').where('org_id', '=', h.org.id).execute()
      assert.equal(rows.length, 1, 'no forged token recorded a membership request')
    })

    it('a provider token stops at exp plus the configured skew (60 s), measured on the injected clock', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'owner')
      const token = await h.op.issueAccessToken(h.accountKey('ada'), { expiresInSec: 120 })
      h.clock.advance(150_000)
      assert.equal((await h.bearer(token, { method: 'GET', url: KEYS_URL })).statusCode, 200, 'within the skew')
      h.clock.advance(40_000)
      await assertUniform401(h, token, 'past exp + skew')
    })

    it('after the provider rotates its key, a token under the new kid is accepted (one key-set refetch) and the old key is gone', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'owner')
      const original = await h.token('ada')
      assert.equal((await h.bearer(original, { method: 'GET', url: KEYS_URL })).statusCode, 200)
      const kid = await h.op.rotateKeys()
      const rotated = await h.token('ada')
      assert.equal(JSON.parse(Buffer.from(rotated.split('.')[0]!, 'base64url').toString()).kid, kid)
      h.clock.advance(31_000) // the key set refetches at most once per 30 s
      assert.equal((await h.bearer(rotated, { method: 'GET', url: KEYS_URL })).statusCode, 200)
      await assertUniform401(h, original, 'a token under the retired key, after the refetch')
    })
  })
}
