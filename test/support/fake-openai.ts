// A loopback stand-in for an OpenAI-compatible chat-completions server (OpenAI, llama.cpp, Ollama, vLLM), speaking
// the real wire format at POST /v1/chat/completions. Each request takes the next scripted behaviour.
import { createServer } from 'node:http'
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export type FakeBehaviour =
  | {
      readonly kind: 'ok'
      readonly text?: string
      /** How a streamed answer is cut; default: one chunk per word. */
      readonly chunks?: readonly string[]
      readonly model?: string
      readonly finishReason?: string
      readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly total_tokens: number }
      /** Wait before sending the status line (a slow model). */
      readonly headersDelayMs?: number
      /** Wait before each streamed chunk (a slow or stalled stream). */
      readonly chunkDelayMs?: number
      /**
       * After `afterChunks` content chunks, only keep-alives for `forMs` (then the rest of the answer): an SSE comment
       * (`: ping`, as llama.cpp and proxies send) or a chunk with no choices, every `everyMs`.
       */
      readonly keepAlive?: { readonly afterChunks: number; readonly everyMs: number; readonly forMs: number; readonly as: 'comment' | 'empty-chunk' }
    }
  | {
      /** 429, 500, 502, 503, 401, … with an OpenAI error body. */
      readonly kind: 'error'
      readonly status: number
      readonly message?: string
      readonly type?: string
      readonly code?: string | null
      readonly retryAfter?: string
      readonly headersDelayMs?: number
    }
  /** TCP reset: before any answer, or (streaming only) after `afterChunks` content chunks. */
  | { readonly kind: 'reset'; readonly afterChunks?: number }
  /** 200 with a body that is not the promised JSON (or, when streaming, a broken event). */
  | { readonly kind: 'malformed'; readonly body?: string }

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly rawBody: string
  /** Parsed JSON, or undefined when the body was not JSON. */
  readonly body: Record<string, unknown> | undefined
}

export interface FakeOpenAi {
  /** `http://127.0.0.1:<port>/v1`, the form a provider's baseUrl takes. */
  readonly baseUrl: string
  readonly requests: readonly RecordedRequest[]
  enqueue(...behaviours: FakeBehaviour[]): void
  close(): Promise<void>
}

export interface FakeOpenAiOptions {
  /** Used when the queue is empty. Default: ok with the text "fake answer". */
  readonly fallback?: FakeBehaviour
  /** When set, a request without `Authorization: Bearer <apiKey>` gets OpenAI's 401, which echoes the key sent. */
  readonly apiKey?: string
}

const DEFAULT_FALLBACK: FakeBehaviour = { kind: 'ok', text: 'fake answer' }

export async function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> {
  const queue: FakeBehaviour[] = []
  const requests: RecordedRequest[] = []
  const sockets = new Set<Socket>()
  const timers = new Set<{ timer: ReturnType<typeof setTimeout>; resolve: () => void }>()
  let count = 0
  let isClosed = false

  // Delays end early (and the handler stops) when the server closes, so close() never waits on a script.
  const wait = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (isClosed) return resolve()
      const entry = {
        timer: setTimeout(() => {
          timers.delete(entry)
          resolve()
        }, ms),
        resolve,
      }
      timers.add(entry)
    })

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy())
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const rawBody = Buffer.concat(chunks).toString('utf8')
    const body = parseObject(rawBody)
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, rawBody, body })
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      return sendError(res, {
        kind: 'error',
        status: 404,
        message: `Unknown request URL: ${req.method} ${req.url}`,
        type: 'invalid_request_error',
        code: 'unknown_url',
      })
    }
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      const sent = (req.headers.authorization ?? '').replace(/^Bearer /, '')
      return sendError(res, {
        kind: 'error',
        status: 401,
        message: `Incorrect API key provided: ${sent}.`,
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      })
    }
    const behaviour = queue.shift() ?? options.fallback ?? DEFAULT_FALLBACK
    const isStream = body?.stream === true
    count += 1
    switch (behaviour.kind) {
      case 'error':
        if (behaviour.headersDelayMs) await wait(behaviour.headersDelayMs)
        return sendError(res, behaviour)
      case 'reset':
        if (behaviour.afterChunks === undefined || !isStream) return void req.socket.resetAndDestroy()
        return sendStream(res, { kind: 'ok', text: 'partial answer that will be cut off' }, body, count, behaviour.afterChunks)
      case 'malformed':
        res.writeHead(200, { 'content-type': isStream ? 'text/event-stream' : 'application/json' })
        return void res.end(behaviour.body ?? (isStream ? 'data: {"choices": [\n\n' : '{"id": "chatcmpl-broken", "choices": ['))
      case 'ok':
        if (behaviour.headersDelayMs) await wait(behaviour.headersDelayMs)
        if (isStream) return sendStream(res, behaviour, body, count, undefined)
        return sendJson(res, 200, completion(behaviour, body, count))
    }
  }

  async function sendStream(
    res: ServerResponse,
    ok: Extract<FakeBehaviour, { kind: 'ok' }>,
    body: Record<string, unknown> | undefined,
    n: number,
    resetAfterChunks: number | undefined,
  ): Promise<void> {
    const includeUsage = isRecord(body?.stream_options) && body.stream_options.include_usage === true
    const base = { id: `chatcmpl-fake-${n}`, object: 'chat.completion.chunk', created: nowSeconds(), model: modelOf(ok, body) }
    const usageField = includeUsage ? { usage: null } : {}
    const send = (payload: unknown): void => void res.write(`data: ${JSON.stringify(payload)}\n\n`)
    const pieces = ok.chunks ?? splitWords(ok.text ?? '')
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], ...usageField })
    for (const [index, piece] of pieces.entries()) {
      if (resetAfterChunks !== undefined && index >= resetAfterChunks) {
        // A reset discards unread data; let the client take what was sent first, as a real mid-stream drop would.
        await new Promise<void>((resolve) => res.write('', () => resolve()))
        await wait(50)
        return void res.socket?.resetAndDestroy()
      }
      if (ok.keepAlive?.afterChunks === index) {
        for (let waited = 0; waited < ok.keepAlive.forMs; waited += ok.keepAlive.everyMs) {
          await wait(ok.keepAlive.everyMs)
          if (isGone(res)) return
          if (ok.keepAlive.as === 'comment') res.write(': ping\n\n')
          else send({ ...base, choices: [], ...usageField })
        }
      }
      if (ok.chunkDelayMs) await wait(ok.chunkDelayMs)
      if (isGone(res)) return
      send({ ...base, choices: [{ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }], ...usageField })
    }
    send({ ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: ok.finishReason ?? 'stop' }], ...usageField })
    if (includeUsage) send({ ...base, choices: [], usage: ok.usage ?? usageOf(body, pieces.length) })
    res.end('data: [DONE]\n\n')
  }

  function isGone(res: ServerResponse): boolean {
    return isClosed || res.destroyed || res.socket === null || res.socket.destroyed
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...behaviours) => void queue.push(...behaviours),
    close: async () => {
      isClosed = true
      for (const entry of timers) {
        clearTimeout(entry.timer)
        entry.resolve()
      }
      timers.clear()
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

function completion(ok: Extract<FakeBehaviour, { kind: 'ok' }>, body: Record<string, unknown> | undefined, n: number): unknown {
  const text = ok.text ?? ''
  return {
    id: `chatcmpl-fake-${n}`,
    object: 'chat.completion',
    created: nowSeconds(),
    model: modelOf(ok, body),
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: ok.finishReason ?? 'stop' }],
    usage: ok.usage ?? usageOf(body, splitWords(text).length),
  }
}

function sendError(res: ServerResponse, error: Extract<FakeBehaviour, { kind: 'error' }>): void {
  const headers: Record<string, string> = error.retryAfter === undefined ? {} : { 'retry-after': error.retryAfter }
  const body = {
    error: { message: error.message ?? `Fake provider error ${error.status}`, type: error.type ?? 'server_error', param: null, code: error.code ?? null },
  }
  sendJson(res, error.status, body, headers)
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers })
  res.end(text)
}

function usageOf(body: Record<string, unknown> | undefined, completionTokens: number): Record<string, number> {
  const messages = Array.isArray(body?.messages) ? body.messages : []
  const chars = messages.reduce<number>((sum, m) => sum + (isRecord(m) && typeof m.content === 'string' ? m.content.length : 0), 0)
  const promptTokens = Math.ceil(chars / 4)
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens }
}

function modelOf(ok: { readonly model?: string }, body: Record<string, unknown> | undefined): string {
  return ok.model ?? (typeof body?.model === 'string' ? body.model : 'fake-model')
}

function splitWords(text: string): string[] {
  return text.match(/\S+\s*/g) ?? []
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000)
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return isRecord(value) ? value : undefined
  } catch {
    return undefined
  }
}
