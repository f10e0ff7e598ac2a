import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { setUpAi } from './route-test-setup.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: AI completion (tiers, models, limits of a request)`, () => {
    it('maxTokens is 1 to the tier ceiling: above it or below 1 is a 400 naming /maxTokens; within it is sent as max_tokens', async (t) => {
      const { box, ask, usageRows } = await setUpAi(t, dialect)
      for (const maxTokens of [513, 0, -1]) {
        const res = await ask({ prompt: 'x', maxTokens })
        assert.equal(res.statusCode, 400)
        assert.deepEqual([...new Set(res.json().errors.map((e: { pointer: string }) => e.pointer))], ['/maxTokens'])
      }
      assert.equal((await ask({ prompt: 'x', maxTokens: 1024, tier: 'deep' })).statusCode, 200, 'the ceiling is per tier')
      assert.equal((await ask({ prompt: 'x', maxTokens: 512 })).statusCode, 200)
      assert.equal((await ask({ prompt: 'x', maxTokens: null })).statusCode, 200)
      assert.deepEqual(
        box.requests.map((r) => r.body?.max_tokens),
        [512, 512],
      )
      assert.equal((await usageRows()).length, 3)
    })

    it('tier picks the provider and model; an unknown tier is a 400 AiTierUnknown naming /tier', async (t) => {
      const { box, cloud, ask } = await setUpAi(t, dialect)
      const res = await ask({ prompt: 'x', tier: 'deep' })
      assert.equal(res.statusCode, 200)
      assert.equal(res.json().tier, 'deep')
      assert.equal(cloud.requests[0]?.body?.model, 'gpt-cloud')
      const unknown = await ask({ prompt: 'x', tier: 'turbo' })
      assert.equal(unknown.statusCode, 400)
      assert.equal(unknown.json().code, 'AiTierUnknown')
      assert.equal(unknown.json().errors[0].pointer, '/tier')
      assert.equal((await ask({ prompt: 'x', tier: null })).json().tier, 'fast', 'null tier: the default')
      assert.equal(box.requests.length, 1)
      assert.equal(cloud.requests.length, 1)
    })

    it('model may only name an allowed model, which goes to its provider; any other is a 400 AiModelNotAllowed naming /model', async (t) => {
      const { box, cloud, ask } = await setUpAi(t, dialect)
      const res = await ask({ prompt: 'x', model: 'gpt-mini' })
      assert.equal(res.statusCode, 200)
      assert.equal(cloud.requests[0]?.body?.model, 'gpt-mini')
      assert.equal(res.json().tier, 'fast', "the default tier's limits apply")
      for (const model of ['gpt-cloud', 'qwen-local', 'o3']) {
        const refused = await ask({ prompt: 'x', model })
        assert.equal(refused.statusCode, 400)
        assert.equal(refused.json().code, 'AiModelNotAllowed')
        assert.equal(refused.json().errors[0].pointer, '/model')
      }
      assert.equal(box.requests.length + cloud.requests.length, 1)
    })
  })
}
