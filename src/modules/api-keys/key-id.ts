import { randomFillSync } from 'node:crypto'

/** The 12 bits of a UUIDv7's `rand_a` used as a counter within one millisecond (RFC 9562 §6.2, method 1). */
const MAX_COUNTER = 0xfff

/**
 * Key ids as UUIDv7 (RFC 9562 §5.7): the mint's millisecond, a counter that grows within it, then 62 random bits. The
 * list orders by (createdAt, keyId) descending, so keys that one process mints in the same millisecond still list
 * newest created first (spec 4.1); random v4 ids put them in a random order. A counter past 4095 in one millisecond
 * carries into the id's time field, which then runs ahead of `createdAt` by as much: the order holds.
 */
export function keyIdGenerator(): (now: number) => string {
  let lastMs = -1
  let counter = 0
  return (now) => {
    if (now > lastMs) {
      lastMs = now
      counter = 0
    } else if (++counter > MAX_COUNTER) {
      lastMs += 1
      counter = 0
    }
    const bytes = Buffer.alloc(16)
    bytes.writeUIntBE(lastMs, 0, 6)
    bytes.writeUInt16BE(0x7000 | counter, 6)
    randomFillSync(bytes, 8, 8)
    bytes[8] = 0x80 | (bytes[8]! & 0x3f)
    const hex = bytes.toString('hex')
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  }
}
