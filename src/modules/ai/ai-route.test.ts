import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { setUpAi } from './route-test-setup.ts'

const COMPLETION_FIELDS = ['finishReason', 'grounding', 'model', 'redactions', 'text', 'tier', 'usage']

for (const dialect of testDialects()) {
  describe(`${dialect}: AI completion`, () => {
    it('a member gets the text, model, tier, finish reason, usage, redactions and grounding; the default tier is used', async (t) => {
      const { box, ask, usageRows } = await setUpAi(t, dialect)
      box.enqueue({
        kind: 'ok',
        text: 'Check the NPSH margin.',
        model: 'qwen-local-q4',
        finishReason: 'length',
        usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
      })
      const res = await ask({ prompt: 'Why does pump P-201 cavitate?' })
      assert.equal(res.statusCode, 200)
      const body = res.json()
      assert.deepEqual(Object.keys(body).sort(), COMPLETION_FIELDS)
      assert.deepEqual(body, {
        text: 'Check the NPSH margin.',
        model: 'qwen-local-q4',
        tier: 'fast',
        finishReason: 'length',
        usage: { promptTokens: 12, completionTokens: 5, totalTokens: 17, isEstimated: false },
        redactions: { ip: 0, cipRoute: 0, apiKey: 0, pin: 0, total: 0 },
        grounding: null,
      })
      assert.equal(res.headers['cache-control'], 'no-store')
      assert.deepEqual(box.requests[0]?.body, { model: 'qwen-local', messages: [{ role: 'user', content: 'Why does pump P-201 cavitate?' }], max_tokens: 512 })
      const [row] = await usageRows()
      assert.equal(row?.status, 'ok')
      assert.equal(Number(row?.total_tokens), 17)
      assert.equal(row?.tier, 'fast')
      assert.equal(row?.model, 'qwen-local-q4')
    })

    it('a null, empty or blank prompt is a 400 naming /prompt, and nothing reaches the provider or the usage records', async (t) => {
      const { box, ask, usageRows } = await setUpAi(t, dialect)
      for (const prompt of [null, '', '   \n']) {
        const res = await ask({ prompt })
        assert.equal(res.statusCode, 400, JSON.stringify(prompt))
        assert.equal(res.json().code, 'ValidationFailed')
        assert.deepEqual(
          res.json().errors.map((e: { pointer: string }) => e.pointer),
          ['/prompt'],
        )
      }
      assert.equal(box.requests.length, 0)
      assert.deepEqual(await usageRows(), [])
    })

    it('a missing prompt, an unknown property or a wrongly typed field is a 400 naming the field', async (t) => {
      const { box, ask } = await setUpAi(t, dialect)
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ systemPrompt: 'x' }, '/prompt'],
        [{ prompt: 'x', temperature: 2 }, '/temperature'],
        [{ prompt: 'x', maxTokens: '5' }, '/maxTokens'],
        [{ prompt: 'x', maxTokens: 1.5 }, '/maxTokens'],
        [{ prompt: 'x', stream: 'yes' }, '/stream'],
        [{ prompt: 'x', maxTokens: 2_147_483_648 }, '/maxTokens'],
      ]
      for (const [payload, pointer] of cases) {
        const res = await ask(payload)
        assert.equal(res.statusCode, 400, JSON.stringify(payload))
        assert.ok(
          res.json().errors.some((e: { pointer: string }) => e.pointer === pointer),
          `${JSON.stringify(payload)} names ${pointer}`,
        )
      }
      assert.equal(box.requests.length, 0)
    })
  })
}
