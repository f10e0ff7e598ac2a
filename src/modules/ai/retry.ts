/** How retries wait. Defaults follow the OpenAI SDKs: 0.5 s doubling to 8 s, minus up to 25 % jitter. */
export interface RetryPolicy {
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  /** A Retry-After longer than this is not waited for: the caller gets AiProviderUnavailable with it at once. */
  readonly maxRetryAfterMs: number
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ baseDelayMs: 500, maxDelayMs: 8_000, maxRetryAfterMs: 10_000 })

/** Delay before retry number `attempt + 1`; jitter spreads clients that failed together. */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt)
  return Math.round(ceiling * (1 - 0.25 * random()))
}

// 408 and 409 are transient at OpenAI (timeouts, lock contention); 429 is a rate limit; 5xx a server fault.
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500
}

/**
 * Milliseconds the provider asks us to wait: `retry-after-ms` (OpenAI) or RFC 9110 §10.2.3 `Retry-After`
 * (delay-seconds or an HTTP-date). Undefined when absent or unreadable.
 */
export function parseRetryAfterMs(headers: Headers, nowMs: number): number | undefined {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '')
  if (Number.isFinite(ms) && ms >= 0) return ms
  const value = headers.get('retry-after')?.trim()
  if (value === undefined || value === '') return undefined
  if (/^\d+(?:\.\d+)?$/.test(value)) return Number(value) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs)
}
