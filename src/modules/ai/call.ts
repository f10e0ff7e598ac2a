import { setTimeout as sleep } from 'node:timers/promises'
import { AiProviderError, AiProviderTimeout, AiProviderUnavailable, isAiError } from './errors.ts'
import { backoffMs, isRetryableStatus } from './retry.ts'
import type { RetryPolicy } from './retry.ts'
import { OutboundAddressRefused } from '../../http/outbound-fetch.ts'
import { startWatchdog } from './watchdog.ts'
import type { Watchdog } from './watchdog.ts'
import { MalformedAnswer } from './wire.ts'

/** Pino-compatible; only retries are logged, with the status and the delay, never a header. */
export interface AiLogger {
  debug(details: Record<string, unknown>, message: string): void
  warn?(details: Record<string, unknown>, message: string): void
}

/** The provider answered with a non-2xx status. `body` is scrubbed of the key and cut short; it is a debug cause. */
export class HttpFailure extends Error {
  override readonly name = 'HttpFailure'
  readonly status: number
  readonly retryAfterMs: number | undefined
  readonly body: string

  constructor(status: number, retryAfterMs: number | undefined, body: string) {
    super(`The provider answered HTTP ${status}`)
    this.status = status
    this.retryAfterMs = retryAfterMs
    this.body = body
  }
}

export interface CallSettings {
  readonly provider: string
  readonly timeoutMs: number
  readonly maxRetries: number
  readonly policy: RetryPolicy
  readonly random: () => number
  readonly log: AiLogger | undefined
}

/** One call to the provider: the caller's signal plus a deadline, combined into the signal every fetch gets. */
export interface Call {
  readonly settings: CallSettings
  readonly caller: AbortSignal | undefined
  readonly watchdog: Watchdog
  readonly signal: AbortSignal
}

export function startCall(settings: CallSettings, caller: AbortSignal | undefined): Call {
  const watchdog = startWatchdog(settings.timeoutMs)
  const signal = caller === undefined ? watchdog.signal : AbortSignal.any([caller, watchdog.signal])
  return { settings, caller, watchdog, signal }
}

// Undici reports every network failure (refused, reset, DNS, TLS, a body cut short) as a TypeError.
function isNetworkError(error: unknown): boolean {
  return error instanceof TypeError
}

/**
 * The error the caller sees for a failed attempt. The caller's own abort is rethrown as its reason: the client
 * has gone and nothing should be retried or reported. Anything unexpected (a bug) passes through unchanged.
 */
export function toAiError(error: unknown, call: Call): unknown {
  const { provider, timeoutMs } = call.settings
  if (call.caller?.aborted) return call.caller.reason
  if (call.watchdog.hasFired) return new AiProviderTimeout(provider, timeoutMs)
  if (isAiError(error)) return error
  if (error instanceof HttpFailure) {
    if (error.status === 429 || error.status === 503) {
      const retryAfterSeconds = error.retryAfterMs === undefined ? undefined : Math.max(1, Math.ceil(error.retryAfterMs / 1000))
      return new AiProviderUnavailable(provider, { cause: error, retryAfterSeconds })
    }
    return new AiProviderError(provider, { cause: error })
  }
  if (error instanceof MalformedAnswer) return new AiProviderError(provider, { cause: error })
  // SSRF guard: the provider's name resolved to an address the configuration does not allow (never retried).
  if (error instanceof OutboundAddressRefused) return new AiProviderError(provider, { cause: error })
  if (isNetworkError(error)) return new AiProviderUnavailable(provider, { cause: error })
  return error
}

function isRetryable(error: unknown): boolean {
  return error instanceof HttpFailure ? isRetryableStatus(error.status) : isNetworkError(error)
}

// A 429 without Retry-After still tells the caller how long to back off: our own next delay, jitter left out.
function withRetryHint(error: unknown, failure: unknown, call: Call, attempt: number): unknown {
  if (!(failure instanceof AiProviderUnavailable) || failure.retryAfterSeconds !== undefined) return failure
  if (!(error instanceof HttpFailure && error.status === 429)) return failure
  const seconds = Math.max(1, Math.ceil(backoffMs(attempt + 1, call.settings.policy, () => 0) / 1000))
  return new AiProviderUnavailable(call.settings.provider, { cause: error, retryAfterSeconds: seconds })
}

/**
 * Runs `attempt` until it succeeds, retrying network errors and 408/409/429/5xx with exponential backoff and
 * jitter (or the provider's Retry-After). Stops at once when the caller aborts, when the deadline would pass
 * before the next try, or when Retry-After exceeds the policy's cap. Throws the mapped domain error.
 */
export async function withRetries<T>(call: Call, attempt: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const { maxRetries, policy, random, log, provider } = call.settings
  for (let tries = 0; ; tries += 1) {
    try {
      return await attempt(call.signal)
    } catch (error) {
      const failure = withRetryHint(error, toAiError(error, call), call, tries)
      if (!isRetryable(error) || tries >= maxRetries || call.caller?.aborted || call.watchdog.hasFired) throw failure
      const retryAfterMs = error instanceof HttpFailure ? error.retryAfterMs : undefined
      if (retryAfterMs !== undefined && retryAfterMs > policy.maxRetryAfterMs) throw failure
      const delayMs = retryAfterMs ?? backoffMs(tries, policy, random)
      if (delayMs >= call.watchdog.remainingMs()) throw failure
      const reason = error instanceof HttpFailure ? `HTTP ${error.status}` : 'connection error'
      log?.debug({ provider, attempt: tries + 1, reason, delayMs }, 'AI provider call failed; retrying')
      try {
        await sleep(delayMs, undefined, { signal: call.signal })
      } catch (abort) {
        throw toAiError(abort, call)
      }
    }
  }
}
