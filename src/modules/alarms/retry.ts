import { isUniqueViolation } from '../../db/constraint-errors.ts'

/** Another writer changed the alarm between our read and our write (optimistic concurrency); retry from a fresh read. */
export class StaleWrite extends Error {
  constructor() { super('alarm changed concurrently') }
}

/**
 * Runs a whole transaction again when it lost a race: a concurrent batch opened the same alarm (the unique index
 * refused ours), stored the same event id, or wrote the alarm we read. The retry reads the winner's rows.
 */
export async function retryOnRace<T>(attempt: () => Promise<T>, attempts = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt()
    } catch (err) {
      if (i >= attempts || !(err instanceof StaleWrite || isUniqueViolation(err))) throw err
    }
  }
}
