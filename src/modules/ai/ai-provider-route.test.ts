import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { setUpAi } from './route-test-setup.ts'

const PROVIDER_TEXT = 'Internal model shard 7 exploded; trace id xyz-secret-provider-detail'

for (const dialect of testDialects()) {
  describe(`${dialect}: AI completion against the provider`, () => {
    const mappings: Array<[string, Parameters<Awaited<ReturnType<typeof setUpAi>>['cloud']['enqueue']>[0], number, string]> = [
      ['HTTP 500', { kind: 'error', status: 500, message: PROVIDER_TEXT }, 502, 'AiProviderError'],
      ['HTTP 400', { kind: 'error', status: 400, message: PROVIDER_TEXT, type: 'invalid_request_error' }, 502, 'AiProviderError'],
      ['HTTP 503', { kind: 'error', status: 503, message: PROVIDER_TEXT }, 503, 'AiProviderUnavailable'],
      ['HTTP 429', { kind: 'error', status: 429, message: PROVIDER_TEXT, type: 'rate_limit_exceeded' }, 503, 'AiProviderUnavailable'],
      ['a connection reset', { kind: 'reset' }, 503, 'AiProviderUnavailable'],
      ['a malformed answer', { kind: 'malformed', body: `{"error": "${PROVIDER_TEXT}"` }, 502, 'AiProviderError'],
    ]
    it("provider failures map to 502/503 with a stable code and none of the provider's text; each is recorded as failed", async (t) => {
      const { h, cloud, ask, usageRows } = await setUpAi(t, dialect)
      for (const [label, behaviour, status, code] of mappings) {
        h.clock.advance(1_000)
        cloud.enqueue(behaviour)
        const res = await ask({ prompt: 'x', tier: 'deep' })
        assert.equal(res.statusCode, status, label)
        assert.equal(res.json().code, code, label)
        assert.ok(!res.body.includes('shard 7') && !res.body.includes('xyz-secret'), `${label}: no provider text`)
        const row = (await usageRows()).at(-1)
        assert.equal(row?.status, 'failed', label)
        assert.equal(row?.error_code, code, label)
        assert.equal(Number(row?.total_tokens), 0, label)
      }
      assert.equal((await usageRows()).length, mappings.length)
    })

    it('a provider 429 with Retry-After gives 503 with that Retry-After to the caller', async (t) => {
      const { box, ask } = await setUpAi(t, dialect)
      // Longer than the retry policy waits: passed on at once rather than waited for.
      box.enqueue({ kind: 'error', status: 429, retryAfter: '30', message: PROVIDER_TEXT })
      const res = await ask({ prompt: 'x' })
      assert.equal(res.statusCode, 503)
      assert.equal(res.headers['retry-after'], '30')
      assert.equal(res.json().retryAfterSeconds, 30)
      assert.equal(box.requests.length, 1)
    })

    it('a transient 5xx is retried with backoff and the caller gets the answer', async (t) => {
      const { box, ask } = await setUpAi(t, dialect)
      box.enqueue({ kind: 'error', status: 502 }, { kind: 'ok', text: 'second time lucky' })
      const res = await ask({ prompt: 'x' })
      assert.equal(res.statusCode, 200)
      assert.equal(res.json().text, 'second time lucky')
      assert.equal(box.requests.length, 2)
    })

    it('a provider slower than its timeoutMs becomes 504 AiProviderTimeout', async (t) => {
      const { box, ask, usageRows } = await setUpAi(t, dialect)
      box.enqueue({ kind: 'ok', text: 'too late', headersDelayMs: 2_000 })
      const res = await ask({ prompt: 'x', tier: 'hasty' })
      assert.equal(res.statusCode, 504)
      assert.equal(res.json().code, 'AiProviderTimeout')
      assert.equal((await usageRows())[0]?.error_code, 'AiProviderTimeout')
    })
  })
}
