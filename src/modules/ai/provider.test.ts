import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { TestContext } from 'node:test'
import { startFakeOpenAi } from '../../../test/support/fake-openai.ts'
import type { FakeOpenAi } from '../../../test/support/fake-openai.ts'
import type { AiProviderConfig } from './config.ts'
import { createOpenAiProvider } from './provider.ts'
import type { AiProviderDeps, ChatRequest, ChatStreamEvent } from './provider.ts'
import { Secret } from './secret.ts'

const KEY = 'sk-test-4f9a7c2e1b8d6f3a0c5e9b7d2f4a6c8e'
const REQUEST: ChatRequest = {
  model: 'gpt-test',
  messages: [
    { role: 'system', content: 'You help plant engineers.' },
    { role: 'user', content: 'Why does pump P-201 cavitate?' },
  ],
  maxTokens: 256,
}

async function fakeProvider(t: TestContext, config: Partial<AiProviderConfig> = {}, deps: AiProviderDeps = {}) {
  const fake = await startFakeOpenAi()
  t.after(() => fake.close())
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
    { retry: { baseDelayMs: 10, maxDelayMs: 40 }, ...deps },
  )
  return { fake, provider }
}

async function collect(events: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const out: ChatStreamEvent[] = []
  for await (const event of events) out.push(event)
  return out
}

function lastRequest(fake: FakeOpenAi) {
  const request = fake.requests.at(-1)
  assert.ok(request, 'the fake received a request')
  return request
}

describe('ai provider: answers', () => {
  it('a complete answer yields its text, model, finish reason and usage', async (t) => {
    const { fake, provider } = await fakeProvider(t)
    fake.enqueue({
      kind: 'ok',
      text: 'Check NPSH margin.',
      model: 'gpt-test-2025',
      finishReason: 'length',
      usage: { prompt_tokens: 31, completion_tokens: 4, total_tokens: 35 },
    })
    const answer = await provider.complete(REQUEST)
    assert.equal(answer.text, 'Check NPSH margin.')
    assert.equal(answer.model, 'gpt-test-2025')
    assert.equal(answer.finishReason, 'length')
    assert.deepEqual(answer.usage, { promptTokens: 31, completionTokens: 4, totalTokens: 35 })
    assert.match(answer.id, /^chatcmpl-/)
  })

  it('the request goes to /v1/chat/completions with Authorization: Bearer <key>, model, messages and max_tokens', async (t) => {
    const { fake, provider } = await fakeProvider(t)
    await provider.complete(REQUEST)
    const sent = lastRequest(fake)
    assert.equal(sent.method, 'POST')
    assert.equal(sent.path, '/v1/chat/completions')
    assert.equal(sent.headers.authorization, `Bearer ${KEY}`)
    assert.equal(sent.headers['content-type'], 'application/json')
    assert.deepEqual(sent.body, { model: 'gpt-test', messages: REQUEST.messages, max_tokens: 256 })
  })

  it('a provider without a key sends no Authorization header', async (t) => {
    const { fake, provider } = await fakeProvider(t, { apiKey: undefined, trusted: true })
    await provider.complete(REQUEST)
    assert.equal(lastRequest(fake).headers.authorization, undefined)
  })

  it('a streamed answer is assembled from its chunks and ends with finish reason and the usage chunk', async (t) => {
    const { fake, provider } = await fakeProvider(t)
    fake.enqueue({ kind: 'ok', chunks: ['Check ', 'NPSH ', 'margin.'], usage: { prompt_tokens: 31, completion_tokens: 3, total_tokens: 34 } })
    const events = await collect(provider.stream(REQUEST))
    const text = events.flatMap((e) => (e.type === 'delta' ? [e.text] : [])).join('')
    assert.equal(text, 'Check NPSH margin.')
    assert.deepEqual(events.at(-1), {
      type: 'done',
      id: 'chatcmpl-fake-1',
      model: 'gpt-test',
      finishReason: 'stop',
      usage: { promptTokens: 31, completionTokens: 3, totalTokens: 34 },
    })
    const sent = lastRequest(fake)
    assert.equal(sent.body?.stream, true)
    assert.deepEqual(sent.body?.stream_options, { include_usage: true })
    assert.equal(sent.headers.authorization, `Bearer ${KEY}`)
  })

  it('a stream with no text still ends with one done event', async (t) => {
    const { fake, provider } = await fakeProvider(t)
    fake.enqueue({ kind: 'ok', chunks: [], finishReason: 'content_filter' })
    const events = await collect(provider.stream(REQUEST))
    assert.deepEqual(
      events.map((e) => e.type),
      ['done'],
    )
    assert.equal(events[0]?.type === 'done' && events[0].finishReason, 'content_filter')
  })

  it('a server that ignores stream: true and answers JSON is passed on as one delta and done', async (t) => {
    const fake = await startFakeOpenAi()
    t.after(() => fake.close())
    // Forward to the fake with `stream` removed, as a server that ignores the flag would answer.
    const ignoringStream: typeof fetch = (url, init) => {
      const body = JSON.parse(String(init?.body)) as Record<string, unknown>
      delete body.stream
      return fetch(url, { ...init, body: JSON.stringify(body) })
    }
    const provider = createOpenAiProvider(
      { name: 'old', baseUrl: fake.baseUrl, apiKey: undefined, timeoutMs: 5_000, maxRetries: 0, trusted: true },
      { fetch: ignoringStream },
    )
    fake.enqueue({ kind: 'ok', text: 'whole answer' })
    const events = await collect(provider.stream(REQUEST))
    assert.deepEqual(
      events.map((e) => e.type),
      ['delta', 'done'],
    )
    assert.equal(events[0]?.type === 'delta' && events[0].text, 'whole answer')
  })

  it('a trailing slash on the base URL still reaches /v1/chat/completions', async (t) => {
    const { fake, provider } = await fakeProvider(t)
    const other = createOpenAiProvider({ name: 'box', baseUrl: `${fake.baseUrl}/`, apiKey: undefined, timeoutMs: 5_000, maxRetries: 0, trusted: true })
    await other.complete(REQUEST)
    assert.equal(lastRequest(fake).path, '/v1/chat/completions')
    assert.equal(provider.isTrusted, false)
    assert.equal(other.isTrusted, true)
  })

  it('a provider configured with a bad timeout fails fast with TypeError', () => {
    assert.throws(
      () => createOpenAiProvider({ name: 'x', baseUrl: 'http://127.0.0.1:1/v1', apiKey: undefined, timeoutMs: 0, maxRetries: 0, trusted: true }),
      TypeError,
    )
  })
})
