import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { DomainError } from '../../errors/domain-error.ts'
import { toProblem } from '../../http/problem.ts'
import { AiStreamFailed } from './errors.ts'
import type { ChatStreamEvent } from './wire.ts'

// Server-Sent Events (WHATWG HTML §9.2) for `POST /api/ai/complete` with `stream: true`.
export type SseEventName = 'delta' | 'done' | 'error'

export interface SseErrorData {
  readonly code: string
  readonly status: number
  readonly message: string
  readonly retryAfterSeconds?: number
}

/** Writes the status line and SSE headers; proxies are told not to buffer or transform the stream. */
export function startSse(res: ServerResponse, headers: OutgoingHttpHeaders = {}): void {
  res.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
  })
  res.flushHeaders()
}

/**
 * Writes one event with JSON data. JSON.stringify escapes every line break, so the data is always one line.
 * Resolves when the socket can take more (backpressure); resolves false when the client has gone. `cutOff`: while
 * it is aborted (the server draining), a client that does not read is not waited for: its response is destroyed.
 */
export function writeSseEvent(res: ServerResponse, event: SseEventName, data: unknown, cutOff?: AbortSignal): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return Promise.resolve(false)
  if (res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)) return Promise.resolve(true)
  return new Promise((resolve) => {
    const done = (isOpen: boolean) => () => {
      res.off('drain', onDrain)
      res.off('close', onClose)
      cutOff?.removeEventListener('abort', onCutOff)
      resolve(isOpen)
    }
    const onDrain = done(true)
    const onClose = done(false)
    const onCutOff = () => res.destroy()
    res.once('drain', onDrain)
    res.once('close', onClose)
    if (cutOff?.aborted) res.destroy()
    else cutOff?.addEventListener('abort', onCutOff, { once: true })
  })
}

/** Aborts when the client disconnects before the response is finished; pass it to `provider.stream`. */
export function clientGoneSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController()
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new DOMException('The client closed the connection', 'AbortError'))
  })
  return controller.signal
}

/**
 * The `error` event's data, cut from the problem document (`toProblem`): its code, status and detail (as `message`),
 * and `retryAfterSeconds` when the problem has it. Anything but a domain error is a generic 500, never its message.
 */
export function toSseError(error: unknown): SseErrorData {
  const { code, status, detail, retryAfterSeconds } = toProblem(error instanceof DomainError ? error : new AiStreamFailed())
  return { code, status, message: detail, ...(typeof retryAfterSeconds === 'number' ? { retryAfterSeconds } : {}) }
}

export interface SseStreamResult {
  /** The provider's final event (finish reason, usage) when the stream completed. */
  readonly done: Extract<ChatStreamEvent, { type: 'done' }> | undefined
  /** The failure sent as an `error` event, for the route to log with its cause. */
  readonly error: unknown
  readonly isClientGone: boolean
  /** Characters of completion text sent, to estimate usage when the provider reported none. */
  readonly completionChars: number
}

export interface SseStreamOptions {
  readonly onStart?: () => void
  readonly headers?: OutgoingHttpHeaders
  /** The data of the `done` event (default: the provider's finish reason, usage and model). */
  readonly doneData?: (done: Extract<ChatStreamEvent, { type: 'done' }>, completionChars: number) => unknown
  /** Aborted when the server drains: a client that stopped reading then is cut off (writeSseEvent). */
  readonly cutOff?: AbortSignal
}

/**
 * Streams provider events to the client as `delta` ({text}), `done` ({finishReason, usage, model}) and `error`.
 * The first event is awaited before any header is written, so a provider that fails before answering still gets
 * a normal problem response: that error is rethrown (unless the client has already gone). `onStart` runs just
 * before the headers (Fastify: `reply.hijack()`).
 */
export async function sendSseStream(res: ServerResponse, events: AsyncIterable<ChatStreamEvent>, options: SseStreamOptions = {}): Promise<SseStreamResult> {
  const iterator = events[Symbol.asyncIterator]()
  let next: IteratorResult<ChatStreamEvent>
  try {
    next = await iterator.next()
  } catch (error) {
    // Gone before the first event: there is nobody left to answer, with a stream or with a problem.
    if (res.destroyed) return { done: undefined, error: undefined, isClientGone: true, completionChars: 0 }
    throw error
  }
  options.onStart?.()
  startSse(res, options.headers)
  let completionChars = 0
  try {
    for (; !next.done; next = await iterator.next()) {
      const event = next.value
      const { type, ...fields } = event
      if (event.type === 'delta') completionChars += event.text.length
      const data = event.type === 'done' && options.doneData ? options.doneData(event, completionChars) : fields
      if (!(await writeSseEvent(res, type, data, options.cutOff))) return { done: undefined, error: undefined, isClientGone: true, completionChars }
      if (event.type === 'done') {
        res.end()
        return { done: event, error: undefined, isClientGone: false, completionChars }
      }
    }
    res.end()
    return { done: undefined, error: undefined, isClientGone: false, completionChars }
  } catch (error) {
    const isClientGone = res.destroyed
    if (!isClientGone) await writeSseEvent(res, 'error', toSseError(error), options.cutOff)
    res.end()
    return { done: undefined, error: isClientGone ? undefined : error, isClientGone, completionChars }
  } finally {
    await iterator.return?.()
  }
}
