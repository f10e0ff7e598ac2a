import { isPlainObject } from './http-json.ts'
import { MAX_TOKEN_LENGTH } from './options.ts'

const BASE64URL_SEGMENT = /^[A-Za-z0-9_-]+$/
const MAX_ISSUER_LENGTH = 2048

/**
 * Reads `iss` from an UNVERIFIED compact JWS, only to pick the validator that will verify it.
 * Never trust the result for anything else. Returns undefined on anything malformed or oversized.
 */
export function peekIssuer(token: unknown): string | undefined {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return undefined
  const segments = token.split('.')
  // Exactly three segments: a JWE (five) or anything else is not a bearer we route by issuer.
  if (segments.length !== 3) return undefined
  const [header, payload] = segments
  if (!header || !payload || !BASE64URL_SEGMENT.test(header) || !BASE64URL_SEGMENT.test(payload)) return undefined
  let claims: unknown
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (!isPlainObject(claims)) return undefined
  const iss = claims['iss']
  return typeof iss === 'string' && iss.length > 0 && iss.length <= MAX_ISSUER_LENGTH ? iss : undefined
}
