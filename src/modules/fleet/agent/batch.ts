import type { Change } from '../outbox/store.ts'

/** A push carries at most this many changes… */
export const PUSH_BATCH = 500
/** …and about this many bytes of JSON: well under the cloud's 64 MiB body limit, and one batch's memory on each side. */
export const PUSH_BATCH_BYTES = 8 * 1024 * 1024

/**
 * The longest prefix of `changes` whose JSON fits in `maxBytes` (UTF-8), at least the first change: one change
 * larger than the bound still goes, alone (a row is bounded by its table's own limits).
 */
export function fitBatch(changes: readonly Change[], maxBytes: number = PUSH_BATCH_BYTES): Change[] {
  let bytes = 0
  for (let i = 0; i < changes.length; i++) {
    bytes += Buffer.byteLength(JSON.stringify(changes[i])) + 1
    if (bytes > maxBytes && i > 0) return changes.slice(0, i)
  }
  return [...changes]
}
