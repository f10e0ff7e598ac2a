import { setTimeout as sleep } from 'node:timers/promises'
import { isUniqueViolation } from '../../db/constraint-errors.ts'
import { AlarmWriteRacesLost } from './errors.ts'

/** Another writer changed the alarm between our read and our write (optimistic concurrency); retry from a fresh read. */
export class StaleWrite extends Error {
  constructor() {
    super('alarm changed concurrently')
  }
}

/**
 * How long a transaction that keeps losing races is tried again. Generous: the writers of a site's alarms take its
 * lock first (store.ts `lockSiteAlarms`), so a race is rare and a retry meets the winner's committed rows; a loser
 * gives up only when the database is far too busy to apply a batch in this time.
 */
export const RETRY_DEADLINE_MS = 30_000
const FIRST_BACKOFF_MS = 5
const MAX_BACKOFF_MS = 500

/**
 * Runs a whole transaction again when it lost a race: a concurrent batch opened the same alarm (the unique index
 * refused ours), stored the same event id, or wrote the alarm we read. The retry reads the winner's rows. Attempts
 * go on, after a jittered exponential backoff (so that losers do not collide again in step), until one applies or
 * `deadlineMs` (RETRY_DEADLINE_MS unless a test makes it tiny) has passed; `onRetry` hears each retry. A write that lost
 * its last race is AlarmWriteRacesLost (503 with Retry-After): the database is busy, not broken, and nothing was written.
 */
export async function retryOnRace<T>(attempt: () => Promise<T>, options: { deadlineMs?: number; onRetry?: (retry: number) => void } = {}): Promise<T> {
  // Elapsed time of this call, not domain time: the injected clock may be pinned (tests) and must not stop retries.
  const deadline = performance.now() + (options.deadlineMs ?? RETRY_DEADLINE_MS)
  for (let retry = 1; ; retry++) {
    try {
      return await attempt()
    } catch (err) {
      if (!(err instanceof StaleWrite || isUniqueViolation(err))) throw err
      if (performance.now() >= deadline) throw new AlarmWriteRacesLost(err)
      options.onRetry?.(retry)
      const ceiling = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** retry)
      await sleep(ceiling / 2 + (Math.random() * ceiling) / 2)
    }
  }
}
