import { credentialDigest } from '../credential-digest.ts'
import { errors, jwtVerify } from 'jose'
import type { JWTPayload } from 'jose'
import { InvalidBearerToken, JwksFetchFailed } from './errors.ts'
import type { FetchLike } from './http-json.ts'
import { createOidcKeySet } from './key-set.ts'
import type { OidcKeySet } from './key-set.ts'
import { checkAlgorithms, checkAudience, checkClockTolerance, checkFunction, checkNonEmptyString, MAX_TOKEN_LENGTH } from './options.ts'

/** Who an interactive bearer token speaks for. The org role is recomputed from `oid`, never read from here. */
export interface OidcIdentity {
  /** Directory object id: the stable membership key (spec §5 rule 5). */
  readonly oid: string
  /** Pairwise subject; differs from `oid` (spec §2.1 createdByUserId). */
  readonly sub: string
  readonly orgSlug: string
  readonly email?: string
  readonly name?: string
}

export interface OidcBearerValidatorOptions {
  issuer: string
  audience: string | readonly string[]
  algorithms?: readonly string[]
  clockToleranceSec: number
  clock: () => Date
  /**
   * Either a shared `keySet` (preferred: load it at start-up and give it to the ID-token check too) or a
   * `jwksUri`, for which the validator keeps its own cache, fetched on the first token. Not both.
   */
  jwksUri?: string
  keySet?: OidcKeySet
  fetch?: FetchLike
  jwksRefetchIntervalMs?: number
}

/**
 * A token's identity: at once for a token remembered as verified (no promise on the request path, issue 29), else a
 * promise; a refusal is always a rejection (InvalidBearerToken), never a throw.
 */
export interface OidcBearerValidator {
  (token: string): OidcIdentity | Promise<OidcIdentity>
  /** The identity of a token remembered as verified that would pass again unchanged, at once; else undefined. */
  remembered(token: string): OidcIdentity | undefined
}

// RFC 9068 §4 wants typ at+jwt; Entra ID v2 access tokens say "JWT", so both pass (an ID token, also
// "JWT", is kept out by `aud`: its audience is the client id). Any other type is refused: RFC 8725 §3.11.
const ACCEPTED_TYPES = new Set([undefined, 'jwt', 'at+jwt', 'application/at+jwt'])
const MAX_CLAIM_LENGTH = 255
/** Tokens remembered as verified (issue 29), by SHA-256; the map is emptied when full. */
const MAX_REMEMBERED = 10_000

/** A token that passed every check: its identity, and what can change its verdict (the time, the key set). */
interface Remembered {
  readonly identity: OidcIdentity
  readonly exp: number
  readonly nbf: number | undefined
  readonly keys: number
}

/** Builds a local bearer validator (no provider call on the request path); throws TypeError on misuse. */
export function createOidcBearerValidator(options: OidcBearerValidatorOptions): OidcBearerValidator {
  const issuer = checkNonEmptyString(options.issuer, 'issuer')
  const audience = checkAudience(options.audience)
  const algorithms = [...checkAlgorithms(options.algorithms)]
  const clockTolerance = checkClockTolerance(options.clockToleranceSec)
  const clock = checkFunction(options.clock, 'clock')
  const keySet = resolveKeySet(options)
  // A signature check (RS256 ~ 40 µs) is the bearer path's largest cost, and a client sends the same token for its
  // whole life. A token that passed every check is remembered by its SHA-256 (the token itself is not kept) and
  // passes again without one while jose would still pass it: before `exp` and not before `nbf` (with the same
  // tolerance, at the same clock) and with the same key set. Anything else is checked in full again.
  const remembered = new Map<string, Remembered>()

  /** The identity of the token of this digest while jose would still pass it; a token that no longer would is forgotten. */
  function rememberedAs(digest: string): OidcIdentity | undefined {
    const hit = remembered.get(digest)
    if (hit === undefined) return undefined
    const now = Math.floor(clock().getTime() / 1000)
    if (hit.keys === keySet.version() && hit.exp > now - clockTolerance && (hit.nbf === undefined || hit.nbf <= now + clockTolerance)) return hit.identity
    remembered.delete(digest)
    return undefined
  }

  function validateOidcBearer(token: string): OidcIdentity | Promise<OidcIdentity> {
    if (typeof token !== 'string') return Promise.reject(new InvalidBearerToken('ERR_JWT_INVALID'))
    if (token.length > MAX_TOKEN_LENGTH) return Promise.reject(new InvalidBearerToken('ERR_TOKEN_TOO_LARGE'))
    const digest = credentialDigest(token)
    return rememberedAs(digest) ?? verify(token, digest)
  }
  const rememberedToken = (token: string) => (typeof token === 'string' && token.length <= MAX_TOKEN_LENGTH ? rememberedAs(credentialDigest(token)) : undefined)
  return Object.assign(validateOidcBearer, { remembered: rememberedToken })

  /** The full check of a token not remembered (or no longer passing as remembered): jose's, then ours. */
  async function verify(token: string, digest: string): Promise<OidcIdentity> {
    const keys = keySet.version()
    try {
      const { payload, protectedHeader } = await jwtVerify(token, keySet.getKey, {
        issuer,
        audience,
        algorithms,
        clockTolerance,
        currentDate: clock(),
        requiredClaims: ['iss', 'aud', 'exp', 'sub'],
      })
      if (!ACCEPTED_TYPES.has(protectedHeader.typ?.toLowerCase())) {
        throw new InvalidBearerToken('ERR_JWT_CLAIM_VALIDATION_FAILED', { claim: 'typ' })
      }
      const identity = toIdentity(payload)
      if (remembered.size >= MAX_REMEMBERED) remembered.clear()
      remembered.set(digest, { identity, exp: payload.exp!, nbf: payload.nbf, keys })
      return identity
    } catch (error) {
      throw toRejection(error)
    }
  }
}

function resolveKeySet(options: OidcBearerValidatorOptions): OidcKeySet {
  const { jwksUri, keySet, fetch, jwksRefetchIntervalMs, clock } = options
  if (keySet !== undefined) {
    if (jwksUri !== undefined || fetch !== undefined || jwksRefetchIntervalMs !== undefined) {
      throw new TypeError('give either "keySet" or "jwksUri" (with "fetch" and "jwksRefetchIntervalMs"), not both')
    }
    if (typeof keySet?.getKey !== 'function') throw new TypeError('"keySet" must come from createOidcKeySet')
    return keySet
  }
  if (jwksUri === undefined) throw new TypeError('"jwksUri" or "keySet" is required')
  return createOidcKeySet({ jwksUri, clock, fetch, refetchIntervalMs: jwksRefetchIntervalMs })
}

function toIdentity(payload: JWTPayload): OidcIdentity {
  // A sender-constrained token (RFC 9449 §7, RFC 8705 §3) presented without its proof is refused.
  if (payload.cnf !== undefined) throw new InvalidBearerToken('ERR_JWT_CLAIM_VALIDATION_FAILED', { claim: 'cnf' })
  const identity: { -readonly [K in keyof OidcIdentity]: OidcIdentity[K] } = {
    oid: requiredString(payload, 'oid'),
    sub: requiredString(payload, 'sub'),
    orgSlug: requiredString(payload, 'org_slug'),
  }
  if (typeof payload['email'] === 'string') identity.email = payload['email']
  if (typeof payload['name'] === 'string') identity.name = payload['name']
  return Object.freeze(identity)
}

function requiredString(payload: JWTPayload, claim: string): string {
  const value = payload[claim]
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_CLAIM_LENGTH) {
    throw new InvalidBearerToken('ERR_JWT_CLAIM_VALIDATION_FAILED', { claim })
  }
  return value
}

function toRejection(error: unknown): InvalidBearerToken {
  if (error instanceof InvalidBearerToken) return error
  if (error instanceof JwksFetchFailed) return new InvalidBearerToken('ERR_JWKS_FETCH_FAILED', { cause: error })
  if (error instanceof errors.JWTClaimValidationFailed || error instanceof errors.JWTExpired) {
    return new InvalidBearerToken(error.code as errors.JOSEErrorCode, { claim: error.claim })
  }
  if (error instanceof errors.JOSEError) return new InvalidBearerToken(error.code as errors.JOSEErrorCode)
  // Not a token problem we know: still the uniform 401 for the caller, with the cause for the operator.
  return new InvalidBearerToken('ERR_UNEXPECTED', { cause: error })
}
