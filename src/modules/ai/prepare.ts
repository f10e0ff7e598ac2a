import type { AiRedactionConfig } from './config.ts'
import { redact } from './redact.ts'
import type { RedactionCounts } from './redact.ts'
import type { AiTarget } from './target.ts'
import type { ChatMessage, ChatRequest } from './wire.ts'

export interface PreparedRequest {
  readonly request: ChatRequest
  /** Placeholders inserted per kind, prompt and system prompt together (all zero when nothing was redacted). */
  readonly redactions: RedactionCounts
  /** Whether redaction ran: the provider is not trusted and redaction is enabled. */
  readonly isRedacted: boolean
}

export interface PromptInput {
  readonly prompt: string
  readonly systemPrompt?: string | null
}

/**
 * Builds the chat request for a target. Text bound for a provider that is not `trusted` is redacted first
 * (when enabled), so plant addresses, routes, keys and PINs never leave the site in clear.
 */
export function prepareChatRequest(input: PromptInput, target: AiTarget, redaction: AiRedactionConfig): PreparedRequest {
  const isRedacted = redaction.enabled && !target.provider.trusted
  const counts: RedactionCounts = { apiKey: 0, cipRoute: 0, ip: 0, pin: 0 }
  const clean = (text: string): string => {
    if (!isRedacted) return text
    const result = redact(text, redaction.kinds)
    for (const kind of Object.keys(counts) as (keyof RedactionCounts)[]) counts[kind] += result.counts[kind]
    return result.text
  }
  const messages: ChatMessage[] = []
  if (input.systemPrompt !== undefined && input.systemPrompt !== null && input.systemPrompt !== '') {
    messages.push({ role: 'system', content: clean(input.systemPrompt) })
  }
  messages.push({ role: 'user', content: clean(input.prompt) })
  return { request: { model: target.model, messages, maxTokens: target.maxTokens }, redactions: counts, isRedacted }
}
