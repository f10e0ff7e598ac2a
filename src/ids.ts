import { randomBytes, randomFillSync } from 'node:crypto'

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ' // Crockford base32: no I, L, O, U
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

export type OrgId = string & { readonly __brand: 'OrgId' }

export const ORG_ID_PATTERN = /^org_[0-9A-HJKMNP-TV-Z]{8}$/

/** Spec 1: `org_` + 8 Crockford base32 characters, upper case. */
export function newOrgId(): OrgId {
  return `org_${crockford(8)}` as OrgId
}

/**
 * Our own ids: a type prefix and a time-ordered 26-character Crockford string (48-bit ms time, 80 random bits),
 * so they sort by creation and a controller id passed as a batch id is obvious.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  let time = ''
  let t = now
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time
    t = Math.floor(t / 32)
  }
  return `${prefix}_${time}${crockford(16)}`
}

/**
 * The random bytes of our ids, from a pool refilled 4 KiB at a time from the CSPRNG (issue 29): `randomBytes(16)` an
 * id cost ~4 µs (a buffer and a call into OpenSSL each), the pool ~0.3 µs, and a write can mint thousands of ids
 * (alarm events, bulk instances). Each byte is used once; nothing else reads the pool, and key secrets
 * (`randomBase62`) never come from it.
 */
const idBytes = { pool: Buffer.alloc(4096), at: 4096 }

function crockford(length: number): string {
  if (idBytes.at + length > idBytes.pool.length) {
    randomFillSync(idBytes.pool)
    idBytes.at = 0
  }
  const { pool } = idBytes
  const end = idBytes.at + length
  let out = ''
  // 256 is a multiple of 32: masking keeps the distribution uniform.
  for (let i = idBytes.at; i < end; i++) out += CROCKFORD[pool[i]! & 31]
  idBytes.at = end
  return out
}

/**
 * `length` base62 characters from the CSPRNG with rejection sampling: bytes ≥ 248 (= 4 × 62) are thrown away,
 * so every character is uniform (spec 2.1: about 190 bits for 32 characters).
 */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const b of randomBytes(length + 8)) {
      if (b >= 248) continue
      out += BASE62[b % 62]
      if (out.length === length) break
    }
  }
  return out
}
