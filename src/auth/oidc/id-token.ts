import { errors, jwtVerify } from 'jose'
import type { JWTPayload } from 'jose'
import { constantTimeEqual } from './constant-time.ts'
import { InvalidIdToken, JwksFetchFailed } from './errors.ts'
import type { OidcKeySet } from './key-set.ts'
import { checkAlgorithms, checkClockTolerance, checkFunction, checkNonEmptyString, MAX_TOKEN_LENGTH } from './options.ts'

export interface IdTokenClaims {
  /** Pairwise subject: the session's user key on our side of the provider. */
  readonly sub: string
  readonly email?: string
  readonly name?: string
}

export interface VerifyIdTokenOptions {
  issuer: string
  clientId: string
  keySet: OidcKeySet
  clock: () => Date
  clockToleranceSec: number
  algorithms?: readonly string[]
  /** The nonce sent with the authorization request: required after a code exchange. */
  nonce?: string
  /** After a refresh: the session's `sub`, which must not change (OIDC Core §12.2). */
  expectedSub?: string
}

/** Validates an ID token per OIDC Core §3.1.3.7 with the shared key set; throws InvalidIdToken. */
export async function verifyIdToken(idToken: string, options: VerifyIdTokenOptions): Promise<IdTokenClaims> {
  const issuer = checkNonEmptyString(options.issuer, 'issuer')
  const clientId = checkNonEmptyString(options.clientId, 'clientId')
  const algorithms = [...checkAlgorithms(options.algorithms)]
  const clockTolerance = checkClockTolerance(options.clockToleranceSec)
  const clock = checkFunction(options.clock, 'clock')
  if (typeof options.keySet?.getKey !== 'function') throw new TypeError('"keySet" must come from createOidcKeySet')
  if (options.nonce === undefined && options.expectedSub === undefined) {
    throw new TypeError('give "nonce" (after a code exchange) or "expectedSub" (after a refresh)')
  }
  if (typeof idToken !== 'string' || idToken.length > MAX_TOKEN_LENGTH) throw new InvalidIdToken('ERR_JWT_INVALID')

  let payload: JWTPayload
  try {
    const verified = await jwtVerify(idToken, options.keySet.getKey, {
      issuer,
      audience: clientId,
      algorithms,
      clockTolerance,
      currentDate: clock(),
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
    })
    // An access token (typ at+jwt) must not pass as an ID token: RFC 8725 §3.11.
    const typ = verified.protectedHeader.typ
    if (typ !== undefined && typ.toLowerCase() !== 'jwt') fail('typ')
    payload = verified.payload
  } catch (error) {
    throw toRejection(error)
  }
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud]
  if ((audiences.length > 1 || payload['azp'] !== undefined) && payload['azp'] !== clientId) fail('azp')
  if (options.nonce !== undefined) {
    const nonce = payload['nonce']
    if (typeof nonce !== 'string' || !constantTimeEqual(nonce, options.nonce)) fail('nonce')
  }
  if (options.expectedSub !== undefined && payload.sub !== options.expectedSub) fail('sub')
  const sub = payload.sub
  if (typeof sub !== 'string' || sub.length === 0) fail('sub')
  return Object.freeze({
    sub,
    ...(typeof payload['email'] === 'string' ? { email: payload['email'] } : {}),
    ...(typeof payload['name'] === 'string' ? { name: payload['name'] } : {}),
  })
}

function fail(claim: string): never {
  throw new InvalidIdToken('ERR_JWT_CLAIM_VALIDATION_FAILED', { claim })
}

function toRejection(error: unknown): InvalidIdToken {
  if (error instanceof InvalidIdToken) return error
  if (error instanceof JwksFetchFailed) return new InvalidIdToken('ERR_JWKS_FETCH_FAILED', { cause: error })
  if (error instanceof errors.JWTClaimValidationFailed || error instanceof errors.JWTExpired) {
    return new InvalidIdToken(error.code as errors.JOSEErrorCode, { claim: error.claim })
  }
  if (error instanceof errors.JOSEError) return new InvalidIdToken(error.code as errors.JOSEErrorCode)
  return new InvalidIdToken('ERR_UNEXPECTED', { cause: error })
}
