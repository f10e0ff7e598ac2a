// Eager option checks shared by the OIDC factories: misuse is a TypeError at build time, never a 401 later.

/** Asymmetric JWS algorithms only (RFC 8725 §3.1): never `none`, never an HMAC whose key a client could know. */
export const ASYMMETRIC_ALGORITHMS: readonly string[] = Object.freeze([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
])
export const DEFAULT_ALGORITHMS: readonly string[] = Object.freeze(['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'])

/** Longer than any real provider token (Entra with group claims stays under 8 KiB); bounds parsing work. */
export const MAX_TOKEN_LENGTH = 16_384
const MAX_CLOCK_TOLERANCE_SEC = 300

export function checkAlgorithms(value: unknown): readonly string[] {
  if (value === undefined) return DEFAULT_ALGORITHMS
  if (!Array.isArray(value) || value.length === 0) throw new TypeError('"algorithms" must be a non-empty array')
  for (const alg of value) {
    if (typeof alg !== 'string' || !ASYMMETRIC_ALGORITHMS.includes(alg)) {
      throw new TypeError(`"algorithms" may only list ${ASYMMETRIC_ALGORITHMS.join(', ')}; got ${String(alg)}`)
    }
  }
  return Object.freeze([...value] as string[])
}

export function checkClockTolerance(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_CLOCK_TOLERANCE_SEC) {
    throw new TypeError(`"clockToleranceSec" must be a number of seconds from 0 to ${MAX_CLOCK_TOLERANCE_SEC}`)
  }
  return value
}

export function checkNonEmptyString(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`"${name}" must be a non-empty string`)
  return value
}

export function checkFunction<T>(value: T, name: string): T {
  if (typeof value !== 'function') throw new TypeError(`"${name}" must be a function`)
  return value
}

export function checkOptionalFunction<T>(value: T, name: string): T {
  return value === undefined ? value : checkFunction(value, name)
}

export function checkAudience(value: unknown): string | string[] {
  if (typeof value === 'string' && value.length > 0) return value
  if (Array.isArray(value) && value.length > 0 && value.every((aud) => typeof aud === 'string' && aud.length > 0)) {
    return [...value] as string[]
  }
  throw new TypeError('"audience" must be a non-empty string or a non-empty array of them')
}

export function checkIntegerInRange(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`"${name}" must be an integer from ${min} to ${max}`)
  }
  return value
}
