// The OpenAI chat-completions wire format (https://platform.openai.com/docs/api-reference/chat), which llama.cpp
// server, Ollama and vLLM also serve at /v1/chat/completions. Parsing is strict about what we use and lenient
// about what we ignore, because on-premise servers differ in the optional fields they send.
import { isRecord } from './config-checks.ts'

export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant'
  readonly content: string
}

export interface ChatRequest {
  readonly model: string
  readonly messages: readonly ChatMessage[]
  readonly maxTokens: number
}

export interface TokenUsage {
  readonly promptTokens: number
  readonly completionTokens: number
  readonly totalTokens: number
}

export interface ChatCompletion {
  readonly id: string
  /** The model that answered, as the provider reports it. */
  readonly model: string
  readonly text: string
  /** `stop`, `length`, `content_filter`, … as sent by the provider; `unknown` if it sent none. */
  readonly finishReason: string
  /** Absent when the provider does not report usage; the caller then has to estimate. */
  readonly usage: TokenUsage | undefined
}

export type ChatStreamEvent =
  | { readonly type: 'delta'; readonly text: string }
  | { readonly type: 'done'; readonly id: string; readonly model: string; readonly finishReason: string; readonly usage: TokenUsage | undefined }

/** The answer is not what the protocol promises. Its message goes into a `cause` (debug logs), never to the caller. */
export class MalformedAnswer extends Error {
  override readonly name = 'MalformedAnswer'
}

export function toWireBody(request: ChatRequest, mode: 'complete' | 'stream'): string {
  return JSON.stringify({
    model: request.model,
    messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
    // max_tokens, not max_completion_tokens: the one every OpenAI-compatible server accepts.
    max_tokens: request.maxTokens,
    ...(mode === 'stream' ? { stream: true, stream_options: { include_usage: true } } : {}),
  })
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw new MalformedAnswer('the answer is not JSON')
  }
}

/** A token count: a whole number from 0 to 2^53 - 1. */
const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0

/**
 * The provider's usage, when its counts are counts: a negative one would be summed against the tier's tokensPerDay
 * (giving tokens back), and a fraction or one past 2^53 cannot be stored (PostgreSQL bigint). Otherwise it is estimated.
 */
function readUsage(value: unknown): TokenUsage | undefined {
  if (!isRecord(value)) return undefined
  const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = value
  if (!isCount(prompt) || !isCount(completion)) return undefined
  return { promptTokens: prompt, completionTokens: completion, totalTokens: isCount(total) ? total : prompt + completion }
}

function readErrorObject(body: Record<string, unknown>): void {
  // Some servers report a failure inside a 200 (or mid-stream) as { error: {...} }.
  if (body.error !== undefined && body.error !== null) throw new MalformedAnswer('the answer carries an error object')
}

export function parseCompletion(text: string, requestedModel: string): ChatCompletion {
  const body = parseJson(text)
  if (!isRecord(body)) throw new MalformedAnswer('the answer is not a JSON object')
  readErrorObject(body)
  const choice: unknown = Array.isArray(body.choices) ? body.choices[0] : undefined
  const message = isRecord(choice) ? choice.message : undefined
  if (!isRecord(choice) || !isRecord(message)) throw new MalformedAnswer('the answer has no choices[0].message')
  if (typeof message.content !== 'string' && message.content !== null) throw new MalformedAnswer('choices[0].message.content is not a string')
  return {
    id: typeof body.id === 'string' ? body.id : '',
    model: typeof body.model === 'string' ? body.model : requestedModel,
    text: message.content ?? '',
    finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : 'unknown',
    usage: readUsage(body.usage),
  }
}

export interface ChunkFields {
  readonly id?: string
  readonly model?: string
  readonly text?: string
  readonly finishReason?: string
  readonly usage?: TokenUsage
}

/** One `chat.completion.chunk`; the usage chunk has `choices: []`. */
export function parseChunk(data: string): ChunkFields {
  const body = parseJson(data)
  if (!isRecord(body)) throw new MalformedAnswer('a stream chunk is not a JSON object')
  readErrorObject(body)
  if (!Array.isArray(body.choices)) throw new MalformedAnswer('a stream chunk has no choices array')
  const choice: unknown = body.choices[0]
  const delta = isRecord(choice) ? choice.delta : undefined
  const content = isRecord(delta) ? delta.content : undefined
  if (content !== undefined && content !== null && typeof content !== 'string') throw new MalformedAnswer('a delta content is not a string')
  return {
    ...(typeof body.id === 'string' ? { id: body.id } : {}),
    ...(typeof body.model === 'string' ? { model: body.model } : {}),
    ...(typeof content === 'string' && content !== '' ? { text: content } : {}),
    ...(isRecord(choice) && typeof choice.finish_reason === 'string' ? { finishReason: choice.finish_reason } : {}),
    ...(readUsage(body.usage) ? { usage: readUsage(body.usage) } : {}),
  }
}
