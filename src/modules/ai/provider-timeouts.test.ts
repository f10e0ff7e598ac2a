import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { TestContext } from 'node:test'
import { startFakeOpenAi } from '../../../test/support/fake-openai.ts'
import type { AiProviderConfig } from './config.ts'
import { AiProviderError, AiProviderTimeout, AiProviderUnavailable, isAiError } from './errors.ts'
import { createOpenAiProvider } from './provider.ts'
import type { AiProviderDeps, ChatRequest, ChatStreamEvent } from './provider.ts'

const REQUEST: ChatRequest = { model: 'llama-3.1-8b', messages: [{ role: 'user', content: 'Summarise alarm flood on line 3' }], maxTokens: 64 }

async function fakeProvider(t: TestContext, config: Partial<AiProviderConfig> = {}, deps: AiProviderDeps = {}) {
  const fake = await startFakeOpenAi()
  t.after(() => fake.close())
  const provider = createOpenAiProvider({
    name: 'plant-box', baseUrl: fake.baseUrl, apiKey: undefined, timeoutMs: 300, maxRetries: 2, trusted: true, ...config,
  }, { retry: { baseDelayMs: 10, maxDelayMs: 40 }, ...deps })
  return { fake, provider }
}

async function drain(events: AsyncIterable<ChatStreamEvent>, seen: ChatStreamEvent[] = []): Promise<unknown> {
  try {
    for await (const event of events) seen.push(event)
    return undefined
  } catch (error) {
    return error
  }
}

describe('ai provider: timeouts and aborts', () => {
  it('a provider slower than timeoutMs fails with AiProviderTimeout (504) within the timeout', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: 300 })
    fake.enqueue({ kind: 'ok', text: 'too late', headersDelayMs: 5_000 })
    const started = performance.now()
    const error = await provider.complete(REQUEST).catch((e: unknown) => e)
    const elapsed = performance.now() - started
    assert.ok(error instanceof AiProviderTimeout)
    assert.equal(error.status, 504)
    assert.equal(error.code, 'AiProviderTimeout')
    assert.ok(elapsed >= 280 && elapsed < 800, `gave up after ${elapsed} ms for a 300 ms timeout`)
    assert.equal(fake.requests.length, 1, 'a timed-out call is not retried past its deadline')
  })

  it('timeoutMs bounds the whole call, retries included', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: 400, maxRetries: 5 })
    fake.enqueue({ kind: 'reset' }, { kind: 'ok', text: 'too late', headersDelayMs: 5_000 })
    const started = performance.now()
    await assert.rejects(provider.complete(REQUEST), AiProviderTimeout)
    assert.ok(performance.now() - started < 900)
    assert.equal(fake.requests.length, 2)
  })

  it('a retry whose backoff would outlast the deadline is not attempted: the failure is reported at once', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: 500 }, { retry: { baseDelayMs: 2_000, maxDelayMs: 2_000 } })
    fake.enqueue({ kind: 'error', status: 502 })
    const started = performance.now()
    await assert.rejects(provider.complete(REQUEST), AiProviderError)
    assert.ok(performance.now() - started < 400)
    assert.equal(fake.requests.length, 1)
  })

  it("the caller's abort rejects with its own reason at once and nothing is retried", async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: 5_000 })
    fake.enqueue({ kind: 'ok', text: 'slow', headersDelayMs: 3_000 })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    const started = performance.now()
    const error = await provider.complete(REQUEST, controller.signal).catch((e: unknown) => e)
    assert.ok(performance.now() - started < 1_000)
    assert.equal((error as Error).name, 'AbortError')
    assert.ok(!isAiError(error), 'a client that went away is not a provider failure')
    assert.equal(fake.requests.length, 1)
  })

  it('an abort during a retry backoff stops the retries', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: 5_000 }, { retry: { baseDelayMs: 2_000, maxDelayMs: 2_000 } })
    fake.enqueue({ kind: 'error', status: 500 })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 150)
    const error = await provider.complete(REQUEST, controller.signal).catch((e: unknown) => e)
    assert.equal((error as Error).name, 'AbortError')
    assert.equal(fake.requests.length, 1)
  })

  it('a stream silent for longer than timeoutMs ends with AiProviderTimeout', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: 300 })
    fake.enqueue({ kind: 'ok', chunks: ['first ', 'second'], chunkDelayMs: 3_000 })
    const started = performance.now()
    const error = await drain(provider.stream(REQUEST))
    assert.ok(error instanceof AiProviderTimeout)
    assert.ok(performance.now() - started < 900)
  })

  it('a slow but steady stream is not cut: for a stream, timeoutMs is the longest silence allowed', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: 400 })
    fake.enqueue({ kind: 'ok', chunks: ['a ', 'b ', 'c ', 'd ', 'e'], chunkDelayMs: 150 })
    const seen: ChatStreamEvent[] = []
    assert.equal(await drain(provider.stream(REQUEST), seen), undefined)
    assert.equal(seen.filter((e) => e.type === 'delta').length, 5)
  })

  it('a stream reset after some chunks ends with AiProviderUnavailable and is not replayed', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: 2_000 })
    fake.enqueue({ kind: 'reset', afterChunks: 2 })
    const seen: ChatStreamEvent[] = []
    const error = await drain(provider.stream(REQUEST), seen)
    assert.ok(error instanceof AiProviderUnavailable)
    assert.deepEqual(seen, [{ type: 'delta', text: 'partial ' }, { type: 'delta', text: 'answer ' }])
    assert.equal(fake.requests.length, 1)
  })

  it('a stream is retried when the provider refuses before answering (429, then ok)', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: 2_000 })
    fake.enqueue({ kind: 'error', status: 429, retryAfter: '0' }, { kind: 'ok', text: 'second try' })
    const seen: ChatStreamEvent[] = []
    assert.equal(await drain(provider.stream(REQUEST), seen), undefined)
    assert.equal(seen.flatMap((e) => (e.type === 'delta' ? [e.text] : [])).join(''), 'second try')
    assert.equal(fake.requests.length, 2)
  })

  it('a malformed stream event maps to AiProviderError', async (t) => {
    const { fake, provider } = await fakeProvider(t)
    fake.enqueue({ kind: 'malformed' })
    assert.ok((await drain(provider.stream(REQUEST))) instanceof AiProviderError)
  })

  it('a stream that ends without a finish reason maps to AiProviderError', async (t) => {
    const { fake, provider } = await fakeProvider(t)
    fake.enqueue({ kind: 'malformed', body: 'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"cut"},"finish_reason":null}]}\n\n' })
    const seen: ChatStreamEvent[] = []
    assert.ok((await drain(provider.stream(REQUEST), seen)) instanceof AiProviderError)
    assert.deepEqual(seen, [{ type: 'delta', text: 'cut' }])
  })

  it('breaking out of a stream early ends cleanly, with no timeout firing afterwards', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: 200 })
    fake.enqueue({ kind: 'ok', chunks: ['one ', 'two ', 'three'], chunkDelayMs: 50 })
    for await (const event of provider.stream(REQUEST)) {
      if (event.type === 'delta') break
    }
    await new Promise((resolve) => setTimeout(resolve, 300))
  })
})
