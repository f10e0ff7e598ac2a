import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { TestContext } from 'node:test'
import { inspect } from 'node:util'
import { startFakeOpenAi } from '../../../test/support/fake-openai.ts'
import type { AiProviderConfig } from './config.ts'
import { AiProviderError, AiProviderUnavailable } from './errors.ts'
import { createOpenAiProvider } from './provider.ts'
import type { AiLogger, ChatRequest } from './provider.ts'
import { Secret } from './secret.ts'

const KEY = 'sk-test-4f9a7c2e1b8d6f3a0c5e9b7d2f4a6c8e'
const REQUEST: ChatRequest = { model: 'gpt-test', messages: [{ role: 'user', content: 'Why does P-201 cavitate?' }], maxTokens: 64 }
const PROVIDER_TEXT = 'upstream shard db-7 exploded: stack trace at /srv/inference/worker.py:812'

async function fakeProvider(t: TestContext, config: Partial<AiProviderConfig> = {}, fakeKey?: string) {
  const fake = await startFakeOpenAi(fakeKey === undefined ? {} : { apiKey: fakeKey })
  t.after(() => fake.close())
  const logged: Record<string, unknown>[] = []
  const log: AiLogger = { debug: (details) => void logged.push(details) }
  const provider = createOpenAiProvider(
    {
      name: 'cloud',
      baseUrl: fake.baseUrl,
      apiKey: new Secret(KEY),
      timeoutMs: 5_000,
      maxRetries: 2,
      trusted: false,
      ...config,
    },
    { retry: { baseDelayMs: 10, maxDelayMs: 40 }, log },
  )
  return { fake, provider, logged }
}

function assertNoLeak(error: unknown, ...secrets: string[]): void {
  const views = [String(error), (error as Error).message, JSON.stringify(error), inspect(error, { depth: 10 })]
  for (const secret of secrets) for (const view of views) assert.ok(!view.includes(secret), `"${secret}" leaked into ${view}`)
}

describe('ai provider: retries and failures', () => {
  it('a 429 with Retry-After: 1 is retried once, about a second later, and the answer returned', async (t) => {
    const { fake, provider } = await fakeProvider(t)
    fake.enqueue({ kind: 'error', status: 429, retryAfter: '1', type: 'requests', code: 'rate_limit_exceeded' }, { kind: 'ok', text: 'ok now' })
    const started = performance.now()
    const answer = await provider.complete(REQUEST)
    const elapsed = performance.now() - started
    assert.equal(answer.text, 'ok now')
    assert.equal(fake.requests.length, 2)
    assert.ok(elapsed >= 950, `waited ${elapsed} ms, Retry-After asked for 1000`)
    assert.ok(elapsed < 5_000, `waited ${elapsed} ms`)
  })

  it('500 on every attempt ends in AiProviderError (502) after maxRetries + 1 attempts, without the provider text', async (t) => {
    const { fake, provider, logged } = await fakeProvider(t, { maxRetries: 2 })
    for (let i = 0; i < 3; i += 1) fake.enqueue({ kind: 'error', status: 500, message: PROVIDER_TEXT })
    const error = await provider.complete(REQUEST).catch((e: unknown) => e)
    assert.ok(error instanceof AiProviderError)
    assert.equal(error.status, 502)
    assert.equal(error.code, 'AiProviderError')
    assert.equal(fake.requests.length, 3)
    assert.equal(logged.length, 2, 'each retry is logged')
    assert.ok(!error.message.includes('db-7') && !String(error).includes('worker.py'))
    assert.match(inspect(error.cause), /db-7/, 'the provider text is kept in the cause for debug logs')
  })

  it('503 on every attempt ends in AiProviderUnavailable (503) with the provider Retry-After', async (t) => {
    const { fake, provider } = await fakeProvider(t, { maxRetries: 1 })
    fake.enqueue(
      { kind: 'error', status: 503, retryAfter: '0', message: PROVIDER_TEXT },
      { kind: 'error', status: 503, retryAfter: '0', message: PROVIDER_TEXT },
    )
    const error = await provider.complete(REQUEST).catch((e: unknown) => e)
    assert.ok(error instanceof AiProviderUnavailable)
    assert.equal(error.status, 503)
    assert.equal(error.retryAfterSeconds, 1)
    assert.equal(fake.requests.length, 2)
    assert.ok(!String(error).includes('db-7'))
  })

  it('429 until the retries run out ends in AiProviderUnavailable that tells when to retry', async (t) => {
    const { fake, provider } = await fakeProvider(t, { maxRetries: 1 })
    fake.enqueue({ kind: 'error', status: 429 }, { kind: 'error', status: 429 })
    const error = await provider.complete(REQUEST).catch((e: unknown) => e)
    assert.ok(error instanceof AiProviderUnavailable)
    assert.equal(fake.requests.length, 2)
    assert.ok(error.retryAfterSeconds !== undefined && error.retryAfterSeconds >= 1)
  })

  it('a Retry-After beyond the cap is not waited for: AiProviderUnavailable at once, carrying it', async (t) => {
    const { fake, provider } = await fakeProvider(t)
    fake.enqueue({ kind: 'error', status: 429, retryAfter: '120' })
    const started = performance.now()
    const error = await provider.complete(REQUEST).catch((e: unknown) => e)
    assert.ok(error instanceof AiProviderUnavailable)
    assert.equal(error.retryAfterSeconds, 120)
    assert.equal(fake.requests.length, 1)
    assert.ok(performance.now() - started < 10_000, 'not the 120 s asked for')
  })

  it('a 400 from the provider is not retried and maps to AiProviderError', async (t) => {
    const { fake, provider } = await fakeProvider(t)
    fake.enqueue({ kind: 'error', status: 400, type: 'invalid_request_error', message: 'max_tokens is too large: 99999. This model supports at most 4096.' })
    const error = await provider.complete(REQUEST).catch((e: unknown) => e)
    assert.ok(error instanceof AiProviderError)
    assert.equal(fake.requests.length, 1)
    assert.ok(!error.message.includes('max_tokens'))
  })

  it('a connection reset is retried and the next answer returned', async (t) => {
    const { fake, provider } = await fakeProvider(t)
    fake.enqueue({ kind: 'reset' }, { kind: 'ok', text: 'after reset' })
    const answer = await provider.complete(REQUEST)
    assert.equal(answer.text, 'after reset')
    assert.equal(fake.requests.length, 2)
  })

  it('resets on every attempt end in AiProviderUnavailable (503)', async (t) => {
    const { fake, provider } = await fakeProvider(t, { maxRetries: 1 })
    fake.enqueue({ kind: 'reset' }, { kind: 'reset' })
    const error = await provider.complete(REQUEST).catch((e: unknown) => e)
    assert.ok(error instanceof AiProviderUnavailable)
    assert.equal(fake.requests.length, 2)
  })

  it('a refused connection ends in AiProviderUnavailable (503)', async () => {
    const fake = await startFakeOpenAi()
    await fake.close()
    const provider = createOpenAiProvider(
      { name: 'box', baseUrl: fake.baseUrl, apiKey: undefined, timeoutMs: 2_000, maxRetries: 1, trusted: true },
      { retry: { baseDelayMs: 10 } },
    )
    const error = await provider.complete(REQUEST).catch((e: unknown) => e)
    assert.ok(error instanceof AiProviderUnavailable)
    assert.equal(error.status, 503)
    assert.equal(error.provider, 'box')
  })

  it('a malformed answer maps to AiProviderError and is not retried', async (t) => {
    const { fake, provider } = await fakeProvider(t)
    fake.enqueue({ kind: 'malformed' })
    const error = await provider.complete(REQUEST).catch((e: unknown) => e)
    assert.ok(error instanceof AiProviderError)
    assert.equal(fake.requests.length, 1)
  })

  it('valid JSON without choices[0].message is a malformed answer (AiProviderError)', async (t) => {
    const { fake, provider } = await fakeProvider(t)
    fake.enqueue({ kind: 'malformed', body: '{"id":"x","object":"chat.completion","choices":[]}' })
    await assert.rejects(provider.complete(REQUEST), AiProviderError)
  })

  it('the key never appears in a message, String(err) or the inspected cause, even when the provider echoes it', async (t) => {
    const { fake, provider } = await fakeProvider(t, {}, 'sk-the-right-key-the-fake-expects')
    const error = await provider.complete(REQUEST).catch((e: unknown) => e)
    assert.ok(error instanceof AiProviderError)
    assert.equal(fake.requests[0]?.headers.authorization, `Bearer ${KEY}`, 'the key was sent')
    assertNoLeak(error, KEY)
    assert.match(inspect(error, { depth: 10 }), /Incorrect API key provided: \[redacted\]/)
  })

  it('the key never appears in the error of a refused connection or a timeout', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: 200, maxRetries: 0 })
    fake.enqueue({ kind: 'ok', text: 'late', headersDelayMs: 2_000 })
    assertNoLeak(await provider.complete(REQUEST).catch((e: unknown) => e), KEY)
    await fake.close()
    assertNoLeak(await provider.complete(REQUEST).catch((e: unknown) => e), KEY)
  })
})
