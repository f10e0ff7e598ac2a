import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { TestContext } from 'node:test'
import { startFakeOpenAi } from '../../../test/support/fake-openai.ts'
import type { AiProviderConfig } from './config.ts'
import { AiProviderError, AiProviderTimeout, AiProviderUnavailable, isAiError } from './errors.ts'
import { createOpenAiProvider } from './provider.ts'
import type { AiProviderDeps, ChatRequest, ChatStreamEvent } from './provider.ts'

const REQUEST: ChatRequest = { model: 'llama-3.1-8b', messages: [{ role: 'user', content: 'Summarise alarm flood on line 3' }], maxTokens: 64 }

// Timing rules are checked against margins that a loaded CI machine cannot eat: a deadline of TIMEOUT_MS, a provider
// that would answer only after SLOW_MS (far beyond any test), and GRACE_MS for event-loop and scheduling delays.
// "Gave up at the deadline" is elapsed >= the deadline and < deadline + GRACE_MS, which is still far below SLOW_MS.
const TIMEOUT_MS = 1_000
const SLOW_MS = 30_000
const GRACE_MS = 2_000

async function fakeProvider(t: TestContext, config: Partial<AiProviderConfig> = {}, deps: AiProviderDeps = {}) {
  const fake = await startFakeOpenAi()
  t.after(() => fake.close())
  const provider = createOpenAiProvider(
    {
      name: 'plant-box',
      baseUrl: fake.baseUrl,
      apiKey: undefined,
      timeoutMs: 300,
      maxRetries: 2,
      trusted: true,
      ...config,
    },
    { retry: { baseDelayMs: 10, maxDelayMs: 40 }, ...deps },
  )
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
    const { fake, provider } = await fakeProvider(t, { timeoutMs: TIMEOUT_MS })
    fake.enqueue({ kind: 'ok', text: 'too late', headersDelayMs: SLOW_MS })
    const started = performance.now()
    const error = await provider.complete(REQUEST).catch((e: unknown) => e)
    const elapsed = performance.now() - started
    assert.ok(error instanceof AiProviderTimeout)
    assert.equal(error.status, 504)
    assert.equal(error.code, 'AiProviderTimeout')
    assert.ok(elapsed >= TIMEOUT_MS - 5 && elapsed < TIMEOUT_MS + GRACE_MS, `gave up after ${elapsed} ms for a ${TIMEOUT_MS} ms timeout`)
    assert.equal(fake.requests.length, 1, 'a timed-out call is not retried past its deadline')
  })

  it('timeoutMs bounds the whole call, retries included', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: TIMEOUT_MS, maxRetries: 5 })
    fake.enqueue({ kind: 'reset' }, { kind: 'ok', text: 'too late', headersDelayMs: SLOW_MS })
    const started = performance.now()
    await assert.rejects(provider.complete(REQUEST), AiProviderTimeout)
    assert.ok(performance.now() - started < TIMEOUT_MS + GRACE_MS)
    assert.equal(fake.requests.length, 2)
  })

  it('a retry whose backoff would outlast the deadline is not attempted: the failure is reported at once', async (t) => {
    // The backoff (SLOW_MS) is longer than the deadline (3 × GRACE_MS): reported well before either would pass.
    const { fake, provider } = await fakeProvider(t, { timeoutMs: 3 * GRACE_MS }, { retry: { baseDelayMs: SLOW_MS, maxDelayMs: SLOW_MS } })
    fake.enqueue({ kind: 'error', status: 502 })
    const started = performance.now()
    await assert.rejects(provider.complete(REQUEST), AiProviderError)
    assert.ok(performance.now() - started < GRACE_MS)
    assert.equal(fake.requests.length, 1)
  })

  it("the caller's abort rejects with its own reason at once and nothing is retried", async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: SLOW_MS })
    fake.enqueue({ kind: 'ok', text: 'slow', headersDelayMs: SLOW_MS })
    const controller = new AbortController()
    // Abort once the provider has the request, so that "nothing is retried" is checked on a request that was sent.
    const sent = setInterval(() => {
      if (fake.requests.length > 0) {
        clearInterval(sent)
        controller.abort()
      }
    }, 5)
    t.after(() => clearInterval(sent))
    const started = performance.now()
    const error = await provider.complete(REQUEST, controller.signal).catch((e: unknown) => e)
    assert.ok(performance.now() - started < GRACE_MS * 2, "rejected at the abort, not at the provider's answer or the deadline")
    assert.equal((error as Error).name, 'AbortError')
    assert.ok(!isAiError(error), 'a client that went away is not a provider failure')
    assert.equal(fake.requests.length, 1)
  })

  it('an abort during a retry backoff stops the retries', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: SLOW_MS }, { retry: { baseDelayMs: SLOW_MS / 2, maxDelayMs: SLOW_MS / 2 } })
    fake.enqueue({ kind: 'error', status: 500 })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 150)
    const error = await provider.complete(REQUEST, controller.signal).catch((e: unknown) => e)
    assert.equal((error as Error).name, 'AbortError')
    assert.equal(fake.requests.length, 1)
  })

  it('a stream silent for longer than timeoutMs ends with AiProviderTimeout', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: TIMEOUT_MS })
    fake.enqueue({ kind: 'ok', chunks: ['first ', 'second'], chunkDelayMs: SLOW_MS })
    const started = performance.now()
    const error = await drain(provider.stream(REQUEST))
    assert.ok(error instanceof AiProviderTimeout)
    assert.ok(performance.now() - started < TIMEOUT_MS + GRACE_MS)
  })

  it('a slow but steady stream is not cut: for a stream, timeoutMs is the longest time without content allowed', async (t) => {
    // Six gaps of 300 ms: 1.8 s in all, well over the 1 s limit, while each gap leaves 700 ms for a loaded machine.
    const { fake, provider } = await fakeProvider(t, { timeoutMs: TIMEOUT_MS })
    fake.enqueue({ kind: 'ok', chunks: ['a ', 'b ', 'c ', 'd ', 'e ', 'f'], chunkDelayMs: 300 })
    const seen: ChatStreamEvent[] = []
    const started = performance.now()
    assert.equal(await drain(provider.stream(REQUEST), seen), undefined)
    assert.ok(performance.now() - started > TIMEOUT_MS, 'the whole stream outlasted timeoutMs')
    assert.equal(seen.filter((e) => e.type === 'delta').length, 6)
  })

  for (const as of ['comment', 'empty-chunk'] as const) {
    it(`a stream that sends only keep-alives (${as}) after its first words ends with AiProviderTimeout: only content restarts the idle timer`, async (t) => {
      // Keep-alives every 100 ms for far longer than the deadline: before the fix the stream stayed open all that time.
      const { fake, provider } = await fakeProvider(t, { timeoutMs: TIMEOUT_MS })
      fake.enqueue({ kind: 'ok', chunks: ['first ', 'late'], keepAlive: { afterChunks: 1, everyMs: 100, forMs: TIMEOUT_MS + 2 * GRACE_MS, as } })
      const seen: ChatStreamEvent[] = []
      const started = performance.now()
      const error = await drain(provider.stream(REQUEST), seen)
      const elapsed = performance.now() - started
      assert.ok(error instanceof AiProviderTimeout, `ended with ${String(error)} after ${elapsed} ms`)
      assert.ok(elapsed >= TIMEOUT_MS - 5 && elapsed < TIMEOUT_MS + GRACE_MS, `gave up after ${elapsed} ms for a ${TIMEOUT_MS} ms timeout`)
      assert.deepEqual(seen, [{ type: 'delta', text: 'first ' }])
    })
  }

  it('a stream reset after some chunks ends with AiProviderUnavailable and is not replayed', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: 2_000 })
    fake.enqueue({ kind: 'reset', afterChunks: 2 })
    const seen: ChatStreamEvent[] = []
    const error = await drain(provider.stream(REQUEST), seen)
    assert.ok(error instanceof AiProviderUnavailable)
    assert.deepEqual(seen, [
      { type: 'delta', text: 'partial ' },
      { type: 'delta', text: 'answer ' },
    ])
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
    fake.enqueue({
      kind: 'malformed',
      body: 'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"cut"},"finish_reason":null}]}\n\n',
    })
    const seen: ChatStreamEvent[] = []
    assert.ok((await drain(provider.stream(REQUEST), seen)) instanceof AiProviderError)
    assert.deepEqual(seen, [{ type: 'delta', text: 'cut' }])
  })

  it('breaking out of a stream early ends cleanly, with no timeout firing afterwards', async (t) => {
    const { fake, provider } = await fakeProvider(t, { timeoutMs: TIMEOUT_MS })
    fake.enqueue({ kind: 'ok', chunks: ['one ', 'two ', 'three'], chunkDelayMs: 50 })
    const seen: ChatStreamEvent[] = []
    for await (const event of provider.stream(REQUEST)) {
      seen.push(event)
      if (event.type === 'delta') break
    }
    assert.deepEqual(seen, [{ type: 'delta', text: 'one ' }])
    // A watchdog left running would abort (and reject into nowhere) within TIMEOUT_MS; wait past it.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS + 300))
  })
})
