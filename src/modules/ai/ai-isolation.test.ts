import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sleep, testDialects } from '../../../test/harness.ts'
import { CLOUD_KEY, setUpAi } from './route-test-setup.ts'

const PROVIDER_TEXT = 'Internal model shard 7 exploded; trace id xyz-secret-provider-detail'

for (const dialect of testDialects()) {
  describe(`${dialect}: AI completion against the provider (secrets and isolation)`, () => {
    it('a provider that echoes the key in its 401 text: the caller gets 502 without it, and no log line holds it', async (t) => {
      const { h, cloud, ask } = await setUpAi(
        t,
        dialect,
        (c) => {
          c.providers[1].apiKey = { env: 'WRONG_KEY' }
        },
        { WRONG_KEY: 'sk-wrong-0123456789abcdef' },
      )
      const res = await ask({ prompt: 'x', tier: 'deep' })
      assert.equal(res.statusCode, 502)
      assert.equal(res.json().code, 'AiProviderError')
      assert.ok(!res.body.includes('sk-wrong'))
      assert.equal(cloud.requests.length, 1)
      assert.ok(!h.rawLogs().includes('sk-wrong') && !h.rawLogs().includes(CLOUD_KEY))
    })

    it("the provider's detail goes to the debug log only (as the cause), never to the caller", async (t) => {
      const { h, cloud, ask } = await setUpAi(t, dialect)
      h.app.log.level = 'debug'
      cloud.enqueue({ kind: 'error', status: 500, message: PROVIDER_TEXT })
      const res = await ask({ prompt: 'x', tier: 'deep' })
      assert.ok(!res.body.includes('shard 7'))
      const line = h.logs().find((l) => l.msg === 'AI provider call failed')
      assert.equal(line?.level, 20, 'debug')
      assert.match(JSON.stringify(line), /shard 7/)
    })

    it('a slow provider does not hold the server: /healthz and an API-key list answer while a completion waits', async (t) => {
      const { h, box, org, ownerKey, ask } = await setUpAi(t, dialect)
      box.enqueue({ kind: 'ok', text: 'slow answer', headersDelayMs: 3_000 })
      let isSlowDone = false
      const slow = ask({ prompt: 'x' }).then((res) => {
        isSlowDone = true
        return res
      })
      for (let waited = 0; box.requests.length === 0 && waited < 2_000; waited += 20) await sleep(20)
      assert.equal(box.requests.length, 1, 'the slow completion has reached the provider')
      const health = await h.inject(undefined, { url: '/healthz' })
      const keys = await h.inject({ org, apiKey: ownerKey }, { url: '/api/admin/api-keys' })
      const second = await ask({ prompt: 'quick one', tier: 'deep' })
      assert.equal(health.statusCode, 200)
      assert.equal(keys.statusCode, 200)
      assert.equal(second.statusCode, 200)
      assert.equal(isSlowDone, false, 'all three answered while the slow completion was still waiting')
      assert.equal((await slow).json().text, 'slow answer')
    })
  })
}
