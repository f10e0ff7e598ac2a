import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import type { TestContext } from 'node:test'
import { startFakeOpenAi } from '../../../test/support/fake-openai.ts'
import { isAiError } from './errors.ts'
import { createOpenAiProvider } from './provider.ts'
import type { ChatRequest } from './provider.ts'
import { clientGoneSignal, sendSseStream, toSseError, writeSseEvent } from './sse.ts'
import type { SseStreamResult } from './sse.ts'

const REQUEST: ChatRequest = { model: 'llama-3.1-8b', messages: [{ role: 'user', content: 'Explain trip on M-101' }], maxTokens: 64 }

interface ParsedEvent {
  event: string
  data: unknown
}

function parseEvents(text: string): ParsedEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n')
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? ''
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n')
      return { event, data: JSON.parse(data) as unknown }
    })
}

/** A stand-in for the route: streams the provider to the client, answers a pre-stream failure as a problem. */
async function startRoute(t: TestContext, timeoutMs = 2_000) {
  const fake = await startFakeOpenAi()
  const provider = createOpenAiProvider({ name: 'box', baseUrl: fake.baseUrl, apiKey: undefined, timeoutMs, maxRetries: 0, trusted: true })
  const results: Promise<SseStreamResult>[] = []
  const server = createServer((_req, res: ServerResponse) => {
    const result = sendSseStream(res, provider.stream(REQUEST, clientGoneSignal(res)))
    results.push(result)
    result.catch((error: unknown) => {
      const problem = toSseError(error)
      res.writeHead(problem.status, { 'content-type': 'application/problem+json' }).end(JSON.stringify(problem))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await fake.close()
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  return { fake, url, results }
}

describe('ai server-sent events', () => {
  it('a streamed answer reaches the client as delta events, then one done event with usage', async (t) => {
    const { fake, url } = await startRoute(t)
    fake.enqueue({ kind: 'ok', chunks: ['Overload ', 'relay.'], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } })
    const res = await fetch(url)
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8')
    assert.equal(res.headers.get('cache-control'), 'no-cache, no-transform')
    assert.deepEqual(parseEvents(await res.text()), [
      { event: 'delta', data: { text: 'Overload ' } },
      { event: 'delta', data: { text: 'relay.' } },
      {
        event: 'done',
        data: { id: 'chatcmpl-fake-1', model: 'llama-3.1-8b', finishReason: 'stop', usage: { promptTokens: 9, completionTokens: 2, totalTokens: 11 } },
      },
    ])
  })

  it('a provider failure before the first event is rethrown before any header, so the route answers a problem', async (t) => {
    const { fake, url } = await startRoute(t)
    fake.enqueue({ kind: 'error', status: 503, message: 'overloaded shard 7' })
    const res = await fetch(url)
    assert.equal(res.status, 503)
    assert.equal(res.headers.get('content-type'), 'application/problem+json')
    assert.equal(((await res.json()) as { code: string }).code, 'AiProviderUnavailable')
  })

  it('a failure mid-stream becomes an error event with code and status, never the provider text', async (t) => {
    const { fake, url, results } = await startRoute(t)
    fake.enqueue({ kind: 'reset', afterChunks: 2 })
    const events = parseEvents(await (await fetch(url)).text())
    assert.deepEqual(
      events.map((e) => e.event),
      ['delta', 'delta', 'error'],
    )
    assert.deepEqual(events[2]?.data, { code: 'AiProviderUnavailable', status: 503, message: 'The AI provider is unavailable. Try again later.' })
    const result = await results[0]
    assert.ok(isAiError(result?.error), 'the error is handed back for the route to log')
    assert.equal(result?.completionChars, 'partial answer '.length)
  })

  it('a client that disconnects mid-stream stops the provider stream', async (t) => {
    const { fake, url, results } = await startRoute(t, 5_000)
    // Gaps of 2 s between chunks; stopping within 1.5 s of the abort means the server did not wait for the next one
    // (a margin that a loaded machine cannot eat, unlike the 200 ms gaps this test used before).
    const gapMs = 2_000
    fake.enqueue({ kind: 'ok', chunks: ['a ', 'b ', 'c ', 'd '], chunkDelayMs: gapMs })
    const controller = new AbortController()
    const res = await fetch(url, { signal: controller.signal })
    const reader = res.body?.getReader()
    await reader?.read()
    const abortedAt = performance.now()
    controller.abort()
    const result = await results[0]
    assert.ok(performance.now() - abortedAt < gapMs * 0.75, 'the server stopped without waiting for the remaining chunks')
    assert.equal(result?.isClientGone, true)
    assert.equal(result?.done, undefined)
  })

  it('a client that disconnects before the first event is reported as gone, not as an error to answer', async (t) => {
    const { fake, url, results } = await startRoute(t, 5_000)
    fake.enqueue({ kind: 'ok', text: 'late', headersDelayMs: 2_000 })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    await assert.rejects(fetch(url, { signal: controller.signal }))
    while (results.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    const result = await results[0]
    assert.equal(result?.isClientGone, true)
  })

  it('event data is one JSON line even when the text holds line breaks', async () => {
    const written: string[] = []
    const res = { destroyed: false, writableEnded: false, write: (chunk: string) => written.push(chunk) > 0 } as unknown as ServerResponse
    assert.equal(await writeSseEvent(res, 'delta', { text: 'line 1\nline 2\r\ndata: fake' }), true)
    assert.deepEqual(written, ['event: delta\ndata: {"text":"line 1\\nline 2\\r\\ndata: fake"}\n\n'])
  })

  it('an unexpected error is sent as a generic InternalError, never its message', () => {
    assert.deepEqual(toSseError(new Error('SELECT * FROM secrets')), { code: 'InternalError', status: 500, message: 'Internal error.' })
  })
})
