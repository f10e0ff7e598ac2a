import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'

/** A site PIN: 6 to 12 ASCII digits. */
export const PIN_PATTERN = /^[0-9]{6,12}$/

export interface ScryptCost {
  /** CPU/memory cost, a power of two. */
  N: number
  r: number
  p: number
}

// 32 MiB and roughly 50–100 ms per check on a small box: a PIN has little entropy, so every guess must be dear.
export const DEFAULT_SCRYPT_COST: ScryptCost = Object.freeze({ N: 2 ** 15, r: 8, p: 1 })
const KEY_LENGTH = 32

/** The configured cost (`SITEGRID_PIN_SCRYPT_LOG2N`, default 15). */
export function pinScryptCost(config: { pinScryptLog2N: number }): ScryptCost {
  return { N: 2 ** config.pinScryptLog2N, r: 8, p: 1 }
}
const SALT_LENGTH = 16

function derive(pin: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: 256 * cost.N * cost.r + 1024 * 1024 }
  return new Promise((resolve, reject) => {
    // The async form runs on the libuv pool: a sign-in never blocks the event loop for other requests.
    scrypt(pin, salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)))
  })
}

/** `scrypt$N$r$p$salt$hash` (base64url): the parameters travel with the hash, so the cost can rise later. */
export async function hashPin(pin: string, cost: ScryptCost = DEFAULT_SCRYPT_COST): Promise<string> {
  const salt = randomBytes(SALT_LENGTH)
  const key = await derive(pin, salt, cost)
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/** Constant-time check of a PIN against a stored hash; a malformed hash never matches. */
export async function verifyPin(pin: string, stored: string): Promise<boolean> {
  const parts = stored.split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number]
  if (![N, r, p].every((v) => Number.isSafeInteger(v) && v > 0)) return false
  const salt = Buffer.from(parts[4]!, 'base64url')
  const expected = Buffer.from(parts[5]!, 'base64url')
  const actual = await derive(pin, salt, { N, r, p })
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}
