import type { Clock } from '../clock.ts'

const MAX_TRACKED = 100_000

/**
 * A fixed one-minute window per credential (the X-Api-Key or Authorization value, else the client address).
 * In memory per process: N processes allow N × the limit, which the README states.
 */
/**
 * `perMinute` may be a function: it is read on every hit, so a configuration reload takes effect at once.
 * `onRefused` hears each refusal (the metrics).
 */
export function createRateLimiter(deps: { perMinute: number | (() => number); clock: Clock; onRefused?: () => void }) {
  const limit = typeof deps.perMinute === 'function' ? deps.perMinute : () => deps.perMinute as number
  let windowStart = 0
  let counts = new Map<string, number>()
  return {
    /** Returns 0 when allowed, else the seconds until the window resets (for Retry-After). */
    hit(bucket: string): number {
      const now = deps.clock.now()
      if (now - windowStart >= 60_000 || counts.size > MAX_TRACKED) {
        windowStart = now - (now % 60_000)
        counts = new Map()
      }
      const n = (counts.get(bucket) ?? 0) + 1
      counts.set(bucket, n)
      if (n <= limit()) return 0
      deps.onRefused?.()
      return Math.max(1, Math.ceil((windowStart + 60_000 - now) / 1000))
    },
  }
}
