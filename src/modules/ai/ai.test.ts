// The pieces together, as the route will use them: configuration → target → prepared request → provider.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { TestContext } from 'node:test'
import { startFakeOpenAi } from '../../../test/support/fake-openai.ts'
import { validateAiConfig } from './config.ts'
import { prepareChatRequest } from './prepare.ts'
import { createOpenAiProvider } from './provider.ts'
import { chooseTarget } from './target.ts'

const CLOUD_KEY = 'sk-cloud-9d8c7b6a5f4e3d2c1b0a'
const PROMPT = 'Controller 10.10.4.21 (route 2,10.10.4.21,1,0) faults after login with PIN 582019 and key csk_Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF'

async function setUp(t: TestContext) {
  const [box, cloud] = [await startFakeOpenAi(), await startFakeOpenAi({ apiKey: CLOUD_KEY })]
  t.after(async () => {
    await box.close()
    await cloud.close()
  })
  const config = validateAiConfig(
    {
      providers: [
        { name: 'plant-box', baseUrl: box.baseUrl, trusted: true, allowPrivateNetwork: true, maxRetries: 0 },
        { name: 'cloud', baseUrl: cloud.baseUrl, apiKey: { env: 'CLOUD_AI_KEY' }, allowPrivateNetwork: true, maxRetries: 0 },
      ],
      tiers: [
        { name: 'fast', provider: 'plant-box', model: 'qwen2.5-7b', maxTokensCeiling: 512, requestsPerMinute: 60, tokensPerDay: 100_000 },
        { name: 'deep', provider: 'cloud', model: 'gpt-4.1', maxTokensCeiling: 2048, requestsPerMinute: 6, tokensPerDay: 50_000 },
      ],
      defaultTier: 'fast',
    },
    { env: { CLOUD_AI_KEY: CLOUD_KEY } },
  )
  const providers = new Map(config.providers.map((p) => [p.name, createOpenAiProvider(p)]))
  const ask = async (tier: string) => {
    const target = chooseTarget(config, { tier, maxTokens: 4096 })
    const prepared = prepareChatRequest({ prompt: PROMPT }, target, config.redaction)
    const answer = await providers.get(target.provider.name)?.complete(prepared.request)
    return { prepared, answer }
  }
  return { box, cloud, ask }
}

describe('ai completion pipeline', () => {
  it('an untrusted provider receives the redacted prompt, with the key in Authorization', async (t) => {
    const { cloud, ask } = await setUp(t)
    const { prepared, answer } = await ask('deep')
    assert.equal(answer?.text, 'fake answer')
    const sent = cloud.requests[0]
    assert.equal(sent?.headers.authorization, `Bearer ${CLOUD_KEY}`)
    assert.deepEqual(sent?.body?.messages, [
      { role: 'user', content: 'Controller [IP] (route [CIP_ROUTE]) faults after login with PIN [PIN] and key [API_KEY]' },
    ])
    assert.equal(sent?.body?.max_tokens, 2048)
    assert.deepEqual(prepared.redactions, { apiKey: 1, cipRoute: 1, ip: 1, pin: 1 })
  })

  it('a trusted on-premise provider receives the prompt unredacted and no Authorization header', async (t) => {
    const { box, ask } = await setUp(t)
    const { prepared } = await ask('fast')
    const sent = box.requests[0]
    assert.deepEqual(sent?.body?.messages, [{ role: 'user', content: PROMPT }])
    assert.equal(sent?.headers.authorization, undefined)
    assert.equal(prepared.isRedacted, false)
  })
})
