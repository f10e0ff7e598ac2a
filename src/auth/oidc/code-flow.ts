import { createHash, randomBytes } from 'node:crypto'
import { constantTimeEqual } from './constant-time.ts'
import { AuthorizationCallbackRejected } from './errors.ts'
import { isAllowedProviderUrl } from './http-json.ts'
import { checkNonEmptyString } from './options.ts'

// The pure half of the browser sign-in (authorization code + PKCE, RFC 6749 §4.1, RFC 7636, OIDC Core §3.1).
// The caller keeps `state`, `nonce` and `verifier` server-side with the pending login; none goes in the URL
// except `state` and the PKCE challenge.

export const LOGIN_SCOPE = 'openid email profile'

export interface AuthorizationRequest {
  readonly url: URL
  readonly state: string
  readonly nonce: string
  /** PKCE code_verifier: secret until the code exchange. */
  readonly verifier: string
}

export interface BuildAuthorizationRequestOptions {
  authorizationEndpoint: string
  clientId: string
  redirectUri: string
  /** OIDC Core §3.1.2.1 login_hint, e.g. the e-mail the user typed. */
  loginHint?: string
}

/** A fresh authorize URL with random state, nonce and S256 challenge; throws TypeError on misuse. */
export function buildAuthorizationRequest(options: BuildAuthorizationRequestOptions): AuthorizationRequest {
  if (!isAllowedProviderUrl(options.authorizationEndpoint)) {
    throw new TypeError('"authorizationEndpoint" must be an https URL (http only on loopback)')
  }
  const clientId = checkNonEmptyString(options.clientId, 'clientId')
  const redirectUri = checkNonEmptyString(options.redirectUri, 'redirectUri')
  // RFC 7636 §4.1: 32 random octets give a 43-character verifier, 256 bits of entropy.
  const verifier = randomToken()
  const state = randomToken()
  const nonce = randomToken()
  const url = new URL(options.authorizationEndpoint)
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: LOGIN_SCOPE,
    state,
    nonce,
    code_challenge: createHash('sha256').update(verifier, 'ascii').digest('base64url'),
    code_challenge_method: 'S256',
    ...(options.loginHint === undefined ? {} : { login_hint: checkNonEmptyString(options.loginHint, 'loginHint') }),
  }
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  return Object.freeze({ url, state, nonce, verifier })
}

export interface ExpectedCallback {
  /** The state stored with the pending login. */
  state: string
  issuer: string
  /** From discovery: when true the `iss` parameter is mandatory (RFC 9207 §2.4). */
  isIssParameterSupported: boolean
}

/** Checks the redirect back from the provider and returns the code; throws AuthorizationCallbackRejected. */
export function readAuthorizationCallback(query: URLSearchParams, expected: ExpectedCallback): string {
  checkNonEmptyString(expected.state, 'state')
  checkNonEmptyString(expected.issuer, 'issuer')
  const state = query.get('state')
  // State first: an error response that does not carry our state is not ours to report (RFC 6749 §10.12).
  if (state === null || !constantTimeEqual(state, expected.state)) throw new AuthorizationCallbackRejected('StateMismatch')
  // RFC 9207 mix-up defence: a response relayed from another provider names that provider.
  const iss = query.get('iss')
  if ((iss !== null || expected.isIssParameterSupported) && iss !== expected.issuer) {
    throw new AuthorizationCallbackRejected('IssuerMismatch')
  }
  const error = query.get('error')
  if (error !== null) throw new AuthorizationCallbackRejected('ProviderError', error.slice(0, 100))
  const code = query.get('code')
  if (code === null || code.length === 0) throw new AuthorizationCallbackRejected('MissingCode')
  return code
}

function randomToken(): string {
  return randomBytes(32).toString('base64url')
}
