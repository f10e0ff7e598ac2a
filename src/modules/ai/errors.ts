// Domain errors of the AI area, on the shared DomainError: a stable wire `code` whose HTTP `status` comes from the
// catalog. Messages are what the caller may see: they never contain provider text or a credential. Provider
// detail goes in `cause`, for debug logs only (the problem handler never serialises it).
import { domainError } from '../../errors/domain-error.ts'

interface CauseOption {
  readonly cause?: unknown
}

/** The provider could not be reached, answered 503, or kept answering 429 until the retries ran out. */
export class AiProviderUnavailable extends domainError('AiProviderUnavailable') {
  /** Provider name from the configuration (not secret), for logs. */
  readonly provider: string

  /** `retryAfterSeconds`: whole seconds the caller should wait before trying again, when the provider said so. */
  constructor(provider: string, options: CauseOption & { readonly retryAfterSeconds?: number } = {}) {
    super('The AI provider is unavailable. Try again later.', {
      cause: options.cause,
      extensions: options.retryAfterSeconds === undefined ? undefined : { retryAfterSeconds: options.retryAfterSeconds },
      retryAfterSeconds: options.retryAfterSeconds,
    })
    this.provider = provider
  }
}

/** The provider answered with an error status (other than 503/429 handled above) or with a malformed answer. */
export class AiProviderError extends domainError('AiProviderError') {
  readonly provider: string

  constructor(provider: string, options: CauseOption = {}) {
    super('The AI provider returned an error or an unreadable answer.', { cause: options.cause })
    this.provider = provider
  }
}

/** The provider did not answer within the configured `timeoutMs` (or sent no content that long mid-stream, keep-alives aside). */
export class AiProviderTimeout extends domainError('AiProviderTimeout') {
  readonly provider: string
  readonly timeoutMs: number

  constructor(provider: string, timeoutMs: number, options: CauseOption = {}) {
    super(`The AI provider did not answer within ${timeoutMs} ms.`, { cause: options.cause })
    this.provider = provider
    this.timeoutMs = timeoutMs
  }
}

/** The request names a tier that is not configured. */
export class AiTierUnknown extends domainError('AiTierUnknown') {
  constructor(tier: string) {
    super(`No AI tier named "${tier}" is configured.`, {
      errors: [{ in: 'body', pointer: '/tier', message: 'is not a configured tier' }],
    })
  }
}

/** The request asks for a model that is not in `allowedModels`. */
export class AiModelNotAllowed extends domainError('AiModelNotAllowed') {
  constructor(model: string) {
    super(`The model "${model}" is not in the list of allowed models.`, {
      errors: [{ in: 'body', pointer: '/model', message: 'is not in the allowed models' }],
    })
  }
}

/** No AI configuration was given to this server (`SITEGRID_AI_CONFIG_FILE` unset). */
export class AiNotConfigured extends domainError('AiNotConfigured') {
  constructor() {
    super('AI completion is not configured on this server.')
  }
}

export type AiError = AiProviderUnavailable | AiProviderError | AiProviderTimeout | AiTierUnknown | AiModelNotAllowed

export function isAiError(error: unknown): error is AiError {
  return (
    error instanceof AiProviderUnavailable ||
    error instanceof AiProviderError ||
    error instanceof AiProviderTimeout ||
    error instanceof AiTierUnknown ||
    error instanceof AiModelNotAllowed
  )
}

/** The organisation used up a tier's `requestsPerMinute` or `tokensPerDay`; `Retry-After` says when it frees up. */
export class AiLimitExceeded extends domainError('RateLimited') {
  constructor(limit: 'requestsPerMinute' | 'tokensPerDay', tier: string, retryAfterSeconds: number) {
    const what = limit === 'requestsPerMinute' ? 'requests per minute' : 'tokens per day'
    super(`The organisation reached its AI limit of ${what} for tier "${tier}"; see Retry-After.`, {
      extensions: { limit, tier, retryAfterSeconds },
      retryAfterSeconds,
    })
  }
}

/** The client closed the connection before the answer: nobody is left to answer, and it is no failure to log. */
export class AiClientGone extends domainError('ServiceUnavailable') {
  constructor() {
    super('The client closed the connection.')
  }
}

/** A stream failed mid-way with something that is no domain error: its `error` event is the generic 500, never the cause's text. */
export class AiStreamFailed extends domainError('InternalError') {
  constructor() {
    super('Internal error.')
  }
}
