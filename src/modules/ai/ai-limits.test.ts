import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { setUpAi } from './route-test-setup.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: AI limits, usage and grounding`, () => {
    it('requestsPerMinute per organisation and tier: the next request is a 429 RateLimited with Retry-After, and frees up after a minute', async (t) => {
      const { h, box, ask, usageRows, org } = await setUpAi(t, dialect, (c) => {
        c.tiers[0].requestsPerMinute = 2
      })
      assert.equal((await ask({ prompt: 'one' })).statusCode, 200)
      h.clock.advance(20_000)
      assert.equal((await ask({ prompt: 'two' })).statusCode, 200)
      const refused = await ask({ prompt: 'three' })
      assert.equal(refused.statusCode, 429)
      assert.equal(refused.json().code, 'RateLimited')
      assert.equal(refused.json().limit, 'requestsPerMinute')
      assert.equal(refused.headers['retry-after'], '40', 'when the oldest request leaves the window')
      assert.equal(box.requests.length, 2, 'the refused request never reached the provider')
      assert.equal((await usageRows()).length, 2, 'and left no usage row')
      assert.equal((await ask({ prompt: 'other tier', tier: 'deep' })).statusCode, 200, 'limits are per tier')
      const other = await h.orgWithKey('member')
      assert.equal((await ask({ prompt: 'other org' }, { org: other.org, apiKey: other.key })).statusCode, 200, 'limits are per organisation')
      h.clock.advance(40_001)
      assert.equal((await ask({ prompt: 'four' })).statusCode, 200)
      assert.equal((await usageRows(org)).length, 4)
    })

    it('tokensPerDay per organisation and tier: once used up, 429 with Retry-After until the next UTC day', async (t) => {
      const { h, box, ask } = await setUpAi(t, dialect, (c) => {
        c.tiers[0].tokensPerDay = 100
      })
      h.clock.set(Date.parse('2026-03-10T22:00:00.000Z'))
      box.enqueue({ kind: 'ok', text: 'a', usage: { prompt_tokens: 60, completion_tokens: 50, total_tokens: 110 } })
      assert.equal((await ask({ prompt: 'x' })).statusCode, 200)
      const refused = await ask({ prompt: 'y' })
      assert.equal(refused.statusCode, 429)
      assert.equal(refused.json().limit, 'tokensPerDay')
      assert.equal(refused.headers['retry-after'], String(2 * 3600))
      assert.equal(box.requests.length, 1)
      h.clock.set(Date.parse('2026-03-11T00:00:00.000Z'))
      assert.equal((await ask({ prompt: 'z' })).statusCode, 200)
    })
  })
}
