import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../../test/harness.ts'
import { setUpAi } from './route-test-setup.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: AI completion: redaction, access and logging (access)`, () => {
    it('no credential is the uniform 401; a member, an admin and an owner may all ask', async (t) => {
      const { h, org, ask, ownerKey, box } = await setUpAi(t, dialect)
      const res = await h.inject(undefined, { method: 'POST', url: '/api/ai/complete', payload: { prompt: 'x' }, host: `${org.slug}.localhost` })
      assert.equal(res.statusCode, 401)
      const { plaintext: adminKey } = await h.mintKey(org, 'admin')
      for (const apiKey of [adminKey, ownerKey]) assert.equal((await ask({ prompt: 'x' }, { org, apiKey })).statusCode, 200)
      assert.equal(box.requests.length, 2)
    })

    it('without SITEGRID_AI_CONFIG_FILE the endpoint answers 503 AiNotConfigured and records nothing', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('member')
      const res = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/ai/complete', payload: { prompt: 'x' } })
      assert.equal(res.statusCode, 503)
      assert.equal(res.json().code, 'AiNotConfigured')
      assert.equal((await h.handle.db.selectFrom('ai_usage').selectAll().where('org_id', '=', org.id).execute()).length, 0)
    })

    it('prompts and completions are not logged, even at debug level', async (t) => {
      const { h, box, ask } = await setUpAi(t, dialect)
      h.app.log.level = 'debug'
      box.enqueue({ kind: 'ok', text: 'The answer mentions Zanzibar-42.' })
      assert.equal((await ask({ prompt: 'Tell me about Quokka-17', systemPrompt: 'Be brief, Walrus-9.' })).statusCode, 200)
      assert.equal((await ask({ prompt: 'Tell me about Quokka-17', stream: true })).statusCode, 200)
      for (const text of ['Quokka-17', 'Walrus-9', 'Zanzibar-42', 'fake answer']) assert.ok(!h.rawLogs().includes(text), text)
    })
  })
}
