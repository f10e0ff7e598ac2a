import type { errors } from 'jose'

// Error classes of the OIDC relying party. None carries a token, a claim value or a secret:
// they end up in logs. A programmer mistake (a bad option) is a TypeError instead.

/** jose's own code, or ours for the failures jose cannot see. */
export type TokenRejectionReason = errors.JOSEErrorCode | 'ERR_TOKEN_TOO_LARGE' | 'ERR_JWKS_FETCH_FAILED' | 'ERR_UNEXPECTED'

/** Any bearer failure. The caller answers the one uniform 401; `reason` is for a debug log only. */
export class InvalidBearerToken extends Error {
  override readonly name = 'InvalidBearerToken'
  readonly reason: TokenRejectionReason
  /** The claim or header parameter at fault, when there is one. */
  readonly claim: string | undefined

  constructor(reason: TokenRejectionReason, options: { claim?: string; cause?: unknown } = {}) {
    super(`bearer token rejected: ${reason}${options.claim ? ` (${options.claim})` : ''}`, options.cause === undefined ? undefined : { cause: options.cause })
    this.reason = reason
    this.claim = options.claim
  }
}

/** An ID token failed OIDC Core §3.1.3.7 validation; no session may be created from it. */
export class InvalidIdToken extends Error {
  override readonly name = 'InvalidIdToken'
  readonly reason: TokenRejectionReason
  readonly claim: string | undefined

  constructor(reason: TokenRejectionReason, options: { claim?: string; cause?: unknown } = {}) {
    super(`ID token rejected: ${reason}${options.claim ? ` (${options.claim})` : ''}`, options.cause === undefined ? undefined : { cause: options.cause })
    this.reason = reason
    this.claim = options.claim
  }
}

/** The provider's discovery document could not be fetched or is not acceptable: a start-up failure. */
export class OidcDiscoveryFailed extends Error {
  override readonly name = 'OidcDiscoveryFailed'
}

/** The key set could not be fetched or parsed. Existing cached keys stay in use. */
export class JwksFetchFailed extends Error {
  override readonly name = 'JwksFetchFailed'
}

/** The token endpoint refused (`error` is the OAuth code, RFC 6749 §5.2) or answered badly. */
export class OidcTokenRequestFailed extends Error {
  override readonly name = 'OidcTokenRequestFailed'
  readonly error: string

  constructor(error: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.error = error
  }
}

/** The redirect back from the provider is not one we can accept (`reason` says why). */
export class AuthorizationCallbackRejected extends Error {
  override readonly name = 'AuthorizationCallbackRejected'
  readonly reason: 'ProviderError' | 'StateMismatch' | 'IssuerMismatch' | 'MissingCode'
  /** The provider's `error` parameter (RFC 6749 §4.1.2.1), e.g. access_denied. */
  readonly providerError: string | undefined

  constructor(reason: AuthorizationCallbackRejected['reason'], providerError?: string) {
    super(`authorization callback rejected: ${reason}${providerError ? ` (${providerError})` : ''}`)
    this.reason = reason
    this.providerError = providerError
  }
}
