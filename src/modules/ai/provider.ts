import { HttpFailure, startCall, toAiError, withRetries } from './call.ts'
import type { AiLogger, Call, CallSettings } from './call.ts'
import type { AiProviderConfig } from './config.ts'
import { MAX_ANSWER_BYTES, MAX_ERROR_BYTES, readBody, readSseData } from './read-body.ts'
import { DEFAULT_RETRY_POLICY, parseRetryAfterMs } from './retry.ts'
import type { RetryPolicy } from './retry.ts'
import { MalformedAnswer, parseChunk, parseCompletion, toWireBody } from './wire.ts'
import type { ChatCompletion, ChatRequest, ChatStreamEvent, TokenUsage } from './wire.ts'

export type { AiLogger } from './call.ts'
export type { ChatCompletion, ChatMessage, ChatRequest, ChatStreamEvent, TokenUsage } from './wire.ts'

/** A language model behind the OpenAI chat-completions protocol. */
export interface AiProvider {
  readonly name: string
  /** On-premise: prompts may go out without redaction. */
  readonly isTrusted: boolean
  /**
   * One answer. Retries transient failures within `timeoutMs`. Throws AiProviderUnavailable (503),
   * AiProviderError (502) or AiProviderTimeout (504); rethrows the caller's abort reason if `signal` aborts.
   */
  complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatCompletion>
  /**
   * Text deltas, then one `done` event with finish reason and usage. Retries only until the provider starts
   * answering; a failure after that ends the iteration with the same errors as `complete`.
   */
  stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatStreamEvent>
}

export interface AiProviderDeps {
  readonly fetch?: typeof fetch
  readonly log?: AiLogger
  readonly retry?: Partial<RetryPolicy>
  /** For deterministic jitter in tests. */
  readonly random?: () => number
  /** Wall clock, only to read an HTTP-date Retry-After. */
  readonly now?: () => number
}

const SCRUBBED = '[redacted]'
const MAX_CAUSE_CHARS = 2_000

function checkConfig(config: AiProviderConfig): void {
  if (!/^https?:\/\//.test(config.baseUrl)) throw new TypeError(`Provider ${config.name}: baseUrl must be an http(s) URL`)
  if (!Number.isInteger(config.timeoutMs) || config.timeoutMs < 1) throw new TypeError(`Provider ${config.name}: timeoutMs must be a positive integer`)
  if (!Number.isInteger(config.maxRetries) || config.maxRetries < 0) throw new TypeError(`Provider ${config.name}: maxRetries must be an integer >= 0`)
}

/** Builds the client for one configured provider; checks the configuration at once (TypeError on misuse). */
export function createOpenAiProvider(config: AiProviderConfig, deps: AiProviderDeps = {}): AiProvider {
  checkConfig(config)
  const fetchFn = deps.fetch ?? globalThis.fetch
  const url = `${config.baseUrl.replace(/\/+$/, '')}/chat/completions`
  const key = config.apiKey?.reveal()
  const now = deps.now ?? Date.now
  const settings: CallSettings = {
    provider: config.name,
    timeoutMs: config.timeoutMs,
    maxRetries: config.maxRetries,
    policy: { ...DEFAULT_RETRY_POLICY, ...deps.retry },
    random: deps.random ?? Math.random,
    log: deps.log,
  }
  // Some providers echo the credential in their error text; the debug cause must not carry it either.
  const scrub = (text: string): string => (key === undefined ? text : text.split(key).join(SCRUBBED)).slice(0, MAX_CAUSE_CHARS)

  async function post(body: string, accept: string, signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept }
    if (key !== undefined) headers.authorization = `Bearer ${key}`
    // An API endpoint has no reason to redirect, and following one could carry the key to another host.
    const response = await fetchFn(url, { method: 'POST', headers, body, signal, redirect: 'manual' })
    if (response.ok) return response
    const { text } = await readBody(response, MAX_ERROR_BYTES)
    throw new HttpFailure(response.status, parseRetryAfterMs(response.headers, now()), scrub(text))
  }

  async function complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatCompletion> {
    const call = startCall(settings, signal)
    try {
      const text = await withRetries(call, async (attemptSignal) => {
        const response = await post(toWireBody(request, 'complete'), 'application/json', attemptSignal)
        const answer = await readBody(response, MAX_ANSWER_BYTES)
        if (answer.isTruncated) throw new MalformedAnswer(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`)
        return answer.text
      })
      return parseCompletion(text, request.model)
    } catch (error) {
      throw toAiError(error, call)
    } finally {
      call.watchdog.stop()
    }
  }

  async function* stream(request: ChatRequest, signal?: AbortSignal): AsyncGenerator<ChatStreamEvent> {
    const call = startCall(settings, signal)
    try {
      const response = await withRetries(call, (attemptSignal) => post(toWireBody(request, 'stream'), 'text/event-stream', attemptSignal))
      yield* readStream(response, request, call)
    } catch (error) {
      throw toAiError(error, call)
    } finally {
      call.watchdog.stop()
    }
  }

  return { name: config.name, isTrusted: config.trusted, complete, stream }
}

async function* readStream(response: Response, request: ChatRequest, call: Call): AsyncGenerator<ChatStreamEvent> {
  // A server that ignores `stream: true` answers with one JSON body; pass it on as a single delta.
  if (response.body === null || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const answer = await readBody(response, MAX_ANSWER_BYTES)
    if (answer.isTruncated) throw new MalformedAnswer(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`)
    const { text, ...rest } = parseCompletion(answer.text, request.model)
    if (text !== '') yield { type: 'delta', text }
    yield { type: 'done', ...rest }
    return
  }
  // From here the deadline becomes an idle timer: the longest the provider may go without content (text, finish reason
  // or usage). Keep-alives (SSE comments, chunks with no choices) do not restart it, or a provider sending only them
  // would hold the stream open forever; the time our own reader takes over a delta is not counted.
  call.watchdog.restart()
  let id = ''
  let model = request.model
  let finishReason: string | undefined
  let usage: TokenUsage | undefined
  for await (const data of readSseData(response.body)) {
    if (data === '[DONE]') break
    const chunk = parseChunk(data)
    id = chunk.id ?? id
    model = chunk.model ?? model
    finishReason = chunk.finishReason ?? finishReason
    usage = chunk.usage ?? usage
    if (chunk.text !== undefined) {
      call.watchdog.pause()
      yield { type: 'delta', text: chunk.text }
    }
    if (chunk.text !== undefined || chunk.finishReason !== undefined || chunk.usage !== undefined) call.watchdog.restart()
  }
  if (finishReason === undefined) throw new MalformedAnswer('the stream ended without a finish_reason')
  yield { type: 'done', id, model, finishReason, usage }
}
