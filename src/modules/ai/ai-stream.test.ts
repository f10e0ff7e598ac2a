import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { parseSse, setUpAi } from './route-test-setup.ts'

const PROVIDER_TEXT = 'Internal model shard 7 exploded; trace id xyz-secret-provider-detail'

for (const dialect of testDialects()) {
  describe(`${dialect}: AI completion streaming`, () => {
    it('stream: true answers Server-Sent Events end to end: deltas, then done with usage, tier and redactions; usage recorded', async (t) => {
      const { cloud, ask, settledRows: usageRows } = await setUpAi(t, dialect)
      cloud.enqueue({ kind: 'ok', chunks: ['Check ', 'NPSH ', 'margin.'], usage: { prompt_tokens: 31, completion_tokens: 3, total_tokens: 34 } })
      const res = await ask({ prompt: 'Pump at 10.0.0.9 cavitates', tier: 'deep', stream: true })
      assert.equal(res.statusCode, 200)
      assert.match(String(res.headers['content-type']), /^text\/event-stream/)
      assert.match(String(res.headers['cache-control']), /no-cache/)
      const events = parseSse(res.body)
      assert.deepEqual(
        events.filter((e) => e.event === 'delta').map((e) => e.data.text),
        ['Check ', 'NPSH ', 'margin.'],
      )
      assert.deepEqual(events.at(-1), {
        event: 'done',
        data: {
          model: 'gpt-cloud',
          tier: 'deep',
          finishReason: 'stop',
          usage: { promptTokens: 31, completionTokens: 3, totalTokens: 34, isEstimated: false },
          redactions: { ip: 1, cipRoute: 0, apiKey: 0, pin: 0, total: 1 },
          grounding: null,
        },
      })
      assert.equal(cloud.requests[0]?.body?.stream, true)
      const [row] = await usageRows()
      assert.equal(row?.status, 'ok')
      assert.equal(Number(row?.total_tokens), 34)
      assert.equal(Number(row?.is_stream), 1)
    })

    it('an answer without usage from the provider gets an estimate, marked isEstimated, and recorded', async (t) => {
      const { box, ask, usageRows } = await setUpAi(t, dialect)
      // Some on-premise servers send no `usage`: about four characters a token, prompt and completion.
      box.enqueue({
        kind: 'malformed',
        body: JSON.stringify({
          id: 'x',
          model: 'qwen-local',
          choices: [{ index: 0, message: { role: 'assistant', content: 'eleven char' }, finish_reason: 'stop' }],
        }),
      })
      const res = await ask({ prompt: 'abcdefgh' })
      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json().usage, { promptTokens: 2, completionTokens: 3, totalTokens: 5, isEstimated: true })
      const [row] = await usageRows()
      assert.equal(Number(row?.total_tokens), 5)
      assert.equal(Number(row?.is_estimated), 1)
    })

    it('a streamed request that fails before the first event is an ordinary problem response (502), recorded as failed', async (t) => {
      const { cloud, ask, settledRows: usageRows } = await setUpAi(t, dialect)
      cloud.enqueue({ kind: 'error', status: 500, message: PROVIDER_TEXT })
      const res = await ask({ prompt: 'x', tier: 'deep', stream: true })
      assert.equal(res.statusCode, 502)
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
      assert.equal(res.json().code, 'AiProviderError')
      assert.ok(!res.body.includes('shard'))
      const [row] = await usageRows()
      assert.equal(row?.status, 'failed')
      assert.equal(row?.error_code, 'AiProviderError')
    })

    it('a stream that sends only keep-alive comments ends with the AiProviderTimeout error event after timeoutMs, recorded as failed', async (t) => {
      const { box, ask, settledRows: usageRows } = await setUpAi(t, dialect)
      // The tier `hasty` calls a provider with timeoutMs 300; pings every 50 ms for 6 s (then the answer would finish).
      box.enqueue({ kind: 'ok', chunks: ['Check ', 'late'], keepAlive: { afterChunks: 1, everyMs: 50, forMs: 6_000, as: 'comment' } })
      const res = await ask({ prompt: 'x', tier: 'hasty', stream: true })
      assert.equal(res.statusCode, 200)
      const events = parseSse(res.body)
      assert.deepEqual(
        events.map((e) => e.event),
        ['delta', 'error'],
      )
      assert.deepEqual(events.at(-1), {
        event: 'error',
        data: { code: 'AiProviderTimeout', status: 504, message: 'The AI provider did not answer within 300 ms.' },
      })
      const [row] = await usageRows()
      assert.equal(row?.status, 'failed')
      assert.equal(row?.error_code, 'AiProviderTimeout')
      assert.equal(Number(row?.is_estimated), 1)
    })

    it('a stream cut mid-way ends with an error event carrying a stable code and no provider text', async (t) => {
      const { cloud, ask, settledRows: usageRows } = await setUpAi(t, dialect)
      cloud.enqueue({ kind: 'reset', afterChunks: 2 })
      const res = await ask({ prompt: 'x', tier: 'deep', stream: true })
      assert.equal(res.statusCode, 200)
      const events = parseSse(res.body)
      assert.deepEqual(
        events.filter((e) => e.event === 'delta').map((e) => e.data.text),
        ['partial ', 'answer '],
      )
      assert.deepEqual(events.at(-1), {
        event: 'error',
        data: { code: 'AiProviderUnavailable', status: 503, message: 'The AI provider is unavailable. Try again later.' },
      })
      const [row] = await usageRows()
      assert.equal(row?.status, 'failed')
      assert.equal(row?.is_estimated, 1)
    })
  })
}
