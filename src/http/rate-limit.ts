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
      if (now - windowStart >= 60_000) {
        windowStart = now - (now % 60_000)
        counts = new Map()
      }
      if (counts.size >= MAX_TRACKED && !counts.has(bucket)) forgetLeastUsed(counts)
      const n = (counts.get(bucket) ?? 0) + 1
      counts.set(bucket, n)
      if (n <= limit()) return 0
      deps.onRefused?.()
      return Math.max(1, Math.ceil((windowStart + 60_000 - now) / 1000))
    },
  }
}

/**
 * Forgets at least half of the buckets, those with the fewest hits in the window first (ties go together): memory stays
 * bounded, and a flood of new credentials (a few hits each) is forgotten before a busy or limited client's count, so
 * junk keys cannot buy a limited client a fresh window. One pass over the map every MAX_TRACKED / 2 new buckets at most.
 */
function forgetLeastUsed(counts: Map<string, number>): void {
  const bucketsByHits = new Map<number, number>()
  for (const hits of counts.values()) bucketsByHits.set(hits, (bucketsByHits.get(hits) ?? 0) + 1)
  let threshold = 0
  let forgotten = 0
  for (const hits of [...bucketsByHits.keys()].sort((a, b) => a - b)) {
    threshold = hits
    forgotten += bucketsByHits.get(hits) ?? 0
    if (forgotten * 2 >= counts.size) break
  }
  for (const [bucket, hits] of counts) if (hits <= threshold) counts.delete(bucket)
}
