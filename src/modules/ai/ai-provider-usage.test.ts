import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { parseSse, setUpAi } from './route-test-setup.ts'

/** Usage counts no provider could mean: a negative one would give tokens back against tokensPerDay; the others cannot be stored. */
const ODD_USAGES = [
  { prompt_tokens: -1_000_000, completion_tokens: 5, total_tokens: -999_995 },
  { prompt_tokens: 10, completion_tokens: 2.5, total_tokens: 12.5 },
  { prompt_tokens: 1e300, completion_tokens: 5, total_tokens: 1e300 },
]

for (const dialect of testDialects()) {
  describe(`${dialect}: a provider's usage that is not whole non-negative counts is estimated, never stored as it came`, () => {
    it('answered (200, usage estimated) and recorded as estimated, streamed or not; the day total stays non-negative', async (t) => {
      const { h, box, ask, org, ownerKey, settledRows } = await setUpAi(t, dialect)
      for (const usage of ODD_USAGES) {
        box.enqueue({ kind: 'ok', text: 'an answer of six words here', usage })
        const res = await ask({ prompt: 'What is alarm flooding?' })
        assert.equal(res.statusCode, 200, res.body)
        const answered = res.json().usage
        assert.equal(answered.isEstimated, true, JSON.stringify(usage))
        assert.ok(Number.isSafeInteger(answered.promptTokens) && answered.promptTokens > 0)

        box.enqueue({ kind: 'ok', chunks: ['an ', 'answer'], usage })
        const streamed = await ask({ prompt: 'What is alarm flooding?', stream: true })
        assert.equal(streamed.statusCode, 200, streamed.body)
        const done = parseSse(streamed.body).find((e) => e.event === 'done')
        assert.equal((done?.data.usage as { isEstimated: boolean }).isEstimated, true, JSON.stringify(usage))
      }
      const rows = await settledRows()
      assert.equal(rows.length, 2 * ODD_USAGES.length)
      assert.deepEqual(
        rows.map((r) => [r.status, Number(r.is_estimated)]),
        rows.map(() => ['ok', 1]),
      )
      const report = (await h.inject({ org, apiKey: ownerKey }, { url: '/api/ai/usage' })).json()
      const fast = report.tiers.find((x: { tier: string }) => x.tier === 'fast')
      assert.ok(fast.tokensToday > 0 && Number.isSafeInteger(fast.tokensToday), `tokensToday ${fast.tokensToday}`)
    })
  })
}
