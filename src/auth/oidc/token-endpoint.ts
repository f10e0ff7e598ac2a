import { OidcTokenRequestFailed } from './errors.ts'
import { HttpJsonFailed, isAllowedProviderUrl, isPlainObject, requestJson } from './http-json.ts'
import type { FetchLike } from './http-json.ts'
import { checkIntegerInRange, checkNonEmptyString, checkOptionalFunction, MAX_TOKEN_LENGTH } from './options.ts'

/** Tokens as the provider sent them. The ID token is NOT verified here: call verifyIdToken next. */
export interface OidcTokenSet {
  readonly accessToken: string
  readonly idToken?: string
  readonly refreshToken?: string
  readonly expiresInSec?: number
  readonly scope?: string
}

export interface TokenEndpointClient {
  tokenEndpoint: string
  clientId: string
  clientSecret: string
  fetch?: FetchLike
  timeoutMs?: number
}

const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024

/** Redeems an authorization code with its PKCE verifier; the response must carry an ID token. */
export async function exchangeCode(options: TokenEndpointClient & { code: string; verifier: string; redirectUri: string }): Promise<OidcTokenSet> {
  const tokens = await requestTokens(options, {
    grant_type: 'authorization_code',
    code: checkNonEmptyString(options.code, 'code'),
    code_verifier: checkNonEmptyString(options.verifier, 'verifier'),
    redirect_uri: checkNonEmptyString(options.redirectUri, 'redirectUri'),
  })
  // OIDC Core §3.1.3.3: the openid scope makes the ID token mandatory.
  if (tokens.idToken === undefined) throw new OidcTokenRequestFailed('invalid_response', 'token response has no id_token')
  return tokens
}

/** Uses a refresh token (RFC 6749 §6); the provider may rotate it, so keep the returned one if any. */
export async function refresh(options: TokenEndpointClient & { refreshToken: string }): Promise<OidcTokenSet> {
  return requestTokens(options, {
    grant_type: 'refresh_token',
    refresh_token: checkNonEmptyString(options.refreshToken, 'refreshToken'),
  })
}

async function requestTokens(client: TokenEndpointClient, form: Record<string, string>): Promise<OidcTokenSet> {
  if (!isAllowedProviderUrl(client.tokenEndpoint)) throw new TypeError('"tokenEndpoint" must be an https URL (http only on loopback)')
  const clientId = checkNonEmptyString(client.clientId, 'clientId')
  const clientSecret = checkNonEmptyString(client.clientSecret, 'clientSecret')
  const fetchImpl = checkOptionalFunction(client.fetch, 'fetch') ?? globalThis.fetch
  const timeoutMs = checkIntegerInRange(client.timeoutMs ?? 10_000, 'timeoutMs', 100, 60_000)
  // RFC 6749 §2.3.1: both parts are form-encoded before Basic encoding.
  const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')
  let response
  try {
    response = await requestJson(
      client.tokenEndpoint,
      {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      },
      { fetch: fetchImpl, timeoutMs, maxBytes: MAX_TOKEN_RESPONSE_BYTES },
    )
  } catch (cause) {
    if (cause instanceof HttpJsonFailed) throw new OidcTokenRequestFailed('unavailable', cause.message, { cause })
    throw cause
  }
  const { status, body } = response
  if (!isPlainObject(body)) throw new OidcTokenRequestFailed('invalid_response', `token endpoint answered ${status} without a JSON object`)
  if (status !== 200) {
    const error = typeof body['error'] === 'string' ? body['error'].slice(0, 100) : 'invalid_response'
    throw new OidcTokenRequestFailed(error, `token endpoint answered ${status} (${error})`)
  }
  return toTokenSet(body)
}

function toTokenSet(body: Record<string, unknown>): OidcTokenSet {
  const accessToken = body['access_token']
  if (typeof accessToken !== 'string' || accessToken.length === 0 || accessToken.length > MAX_TOKEN_LENGTH) {
    throw new OidcTokenRequestFailed('invalid_response', 'token response has no usable access_token')
  }
  // A DPoP-bound token would need proofs we do not send (RFC 9449); only Bearer is usable.
  if (typeof body['token_type'] !== 'string' || body['token_type'].toLowerCase() !== 'bearer') {
    throw new OidcTokenRequestFailed('invalid_response', 'token response token_type is not Bearer')
  }
  const optionalString = (field: string) => {
    const value = body[field]
    if (value === undefined) return undefined
    if (typeof value !== 'string' || value.length === 0) {
      throw new OidcTokenRequestFailed('invalid_response', `token response ${field} is not a string`)
    }
    return value
  }
  // Some providers send expires_in as a numeric string; RFC 6749 §5.1 says number.
  const expiresIn = Number(body['expires_in'])
  const idToken = optionalString('id_token')
  const refreshToken = optionalString('refresh_token')
  // An empty scope (a token with no API scope granted) is as good as none.
  const scope = body['scope'] === '' ? undefined : optionalString('scope')
  return Object.freeze({
    accessToken,
    ...(idToken === undefined ? {} : { idToken }),
    ...(refreshToken === undefined ? {} : { refreshToken }),
    ...(Number.isInteger(expiresIn) && expiresIn > 0 ? { expiresInSec: expiresIn } : {}),
    ...(scope === undefined ? {} : { scope }),
  })
}
