import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AiConfig, AiProviderConfig } from './config.ts'
import { AiModelNotAllowed, AiTierUnknown } from './errors.ts'
import { prepareChatRequest } from './prepare.ts'
import { REDACTION_KINDS } from './redact.ts'
import { chooseTarget } from './target.ts'

const onSite: AiProviderConfig = { name: 'plant-box', baseUrl: 'http://10.20.0.15:8080/v1', apiKey: undefined, timeoutMs: 60_000, maxRetries: 1, trusted: true }
const cloud: AiProviderConfig = { name: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: undefined, timeoutMs: 60_000, maxRetries: 2, trusted: false }
const CONFIG: AiConfig = {
  providers: [onSite, cloud],
  tiers: [
    { name: 'fast', provider: 'plant-box', model: 'qwen2.5-7b-instruct', maxTokensCeiling: 1024, requestsPerMinute: 60, tokensPerDay: 500_000 },
    { name: 'deep', provider: 'openai', model: 'gpt-4.1', maxTokensCeiling: 4096, requestsPerMinute: 10, tokensPerDay: 200_000 },
  ],
  defaultTier: 'fast',
  allowedModels: [{ model: 'gpt-4.1-mini', provider: 'openai' }],
  redaction: { enabled: true, kinds: REDACTION_KINDS },
}
const PROMPT = { prompt: 'PLC 10.0.0.5 on path 1,0 drops out, PIN 482913', systemPrompt: 'Site gateway is 10.0.0.1.' }

describe('ai target choice', () => {
  it('no tier and no model use the default tier with its ceiling as the token budget', () => {
    const target = chooseTarget(CONFIG, {})
    assert.equal(target.tier.name, 'fast')
    assert.equal(target.provider.name, 'plant-box')
    assert.equal(target.model, 'qwen2.5-7b-instruct')
    assert.equal(target.maxTokens, 1024)
  })

  it('maxTokens is clamped to the tier ceiling', () => {
    assert.equal(chooseTarget(CONFIG, { tier: 'deep', maxTokens: 100_000 }).maxTokens, 4096)
    assert.equal(chooseTarget(CONFIG, { tier: 'deep', maxTokens: 300 }).maxTokens, 300)
  })

  it('an allowed model goes to its mapped provider, under the limits of the chosen tier', () => {
    const target = chooseTarget(CONFIG, { model: 'gpt-4.1-mini', maxTokens: 5000 })
    assert.equal(target.provider.name, 'openai')
    assert.equal(target.model, 'gpt-4.1-mini')
    assert.equal(target.tier.name, 'fast')
    assert.equal(target.maxTokens, 1024)
  })

  it('a model outside allowedModels is refused with AiModelNotAllowed (400), even a tier model', () => {
    assert.throws(
      () => chooseTarget(CONFIG, { model: 'gpt-4.1' }),
      (e: unknown) => e instanceof AiModelNotAllowed && e.status === 400,
    )
  })

  it('an unknown tier is refused with AiTierUnknown (400)', () => {
    assert.throws(
      () => chooseTarget(CONFIG, { tier: 'ultra' }),
      (e: unknown) => e instanceof AiTierUnknown && e.status === 400,
    )
  })
})

describe('ai request preparation', () => {
  it('a prompt for an untrusted provider is redacted, system prompt included, with counts', () => {
    const prepared = prepareChatRequest(PROMPT, chooseTarget(CONFIG, { tier: 'deep' }), CONFIG.redaction)
    assert.equal(prepared.isRedacted, true)
    assert.deepEqual(prepared.request.messages, [
      { role: 'system', content: 'Site gateway is [IP].' },
      { role: 'user', content: 'PLC [IP] on path [CIP_ROUTE] drops out, PIN [PIN]' },
    ])
    assert.deepEqual(prepared.redactions, { apiKey: 0, cipRoute: 1, ip: 2, pin: 1 })
    assert.equal(prepared.request.model, 'gpt-4.1')
    assert.equal(prepared.request.maxTokens, 4096)
  })

  it('a prompt for a trusted (on-premise) provider is sent as written', () => {
    const prepared = prepareChatRequest(PROMPT, chooseTarget(CONFIG, { tier: 'fast' }), CONFIG.redaction)
    assert.equal(prepared.isRedacted, false)
    assert.equal(prepared.request.messages[1]?.content, PROMPT.prompt)
    assert.deepEqual(prepared.redactions, { apiKey: 0, cipRoute: 0, ip: 0, pin: 0 })
  })

  it('redaction disabled in the configuration sends even an untrusted provider the prompt as written', () => {
    const prepared = prepareChatRequest(PROMPT, chooseTarget(CONFIG, { tier: 'deep' }), { enabled: false, kinds: REDACTION_KINDS })
    assert.equal(prepared.isRedacted, false)
    assert.equal(prepared.request.messages[1]?.content, PROMPT.prompt)
  })

  it('only the configured kinds are redacted', () => {
    const prepared = prepareChatRequest(PROMPT, chooseTarget(CONFIG, { tier: 'deep' }), { enabled: true, kinds: ['pin'] })
    assert.equal(prepared.request.messages[1]?.content, 'PLC 10.0.0.5 on path 1,0 drops out, PIN [PIN]')
  })

  it('an empty or null system prompt adds no system message', () => {
    for (const systemPrompt of [null, '', undefined]) {
      const prepared = prepareChatRequest({ prompt: 'hi', systemPrompt }, chooseTarget(CONFIG, {}), CONFIG.redaction)
      assert.deepEqual(
        prepared.request.messages.map((m) => m.role),
        ['user'],
      )
    }
  })
})
