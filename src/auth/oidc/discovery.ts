import { OidcDiscoveryFailed } from './errors.ts'
import { HttpJsonFailed, isAllowedProviderUrl, isPlainObject, parseUrl, requestJson } from './http-json.ts'
import type { FetchLike } from './http-json.ts'
import { ASYMMETRIC_ALGORITHMS, checkIntegerInRange, checkOptionalFunction } from './options.ts'

/** What the relying party uses from the provider's discovery document (OIDC Discovery 1.0 §3). */
export interface OidcProviderMetadata {
  readonly issuer: string
  readonly authorizationEndpoint: string
  readonly tokenEndpoint: string
  readonly jwksUri: string
  readonly endSessionEndpoint?: string
  /** RFC 9207: the provider names itself in the authorization response, so the callback must check `iss`. */
  readonly isIssParameterSupported: boolean
  readonly idTokenSigningAlgValuesSupported: readonly string[]
}

export interface DiscoverOidcProviderOptions {
  issuer: string
  fetch?: FetchLike
  timeoutMs?: number
}

const MAX_DISCOVERY_BYTES = 256 * 1024

/** Fetches and checks the discovery document at start-up; throws OidcDiscoveryFailed, or TypeError on misuse. */
export async function discoverOidcProvider(options: DiscoverOidcProviderOptions): Promise<OidcProviderMetadata> {
  const { issuer } = options
  if (!isAllowedProviderUrl(issuer) || parseUrl(issuer)?.search) {
    throw new TypeError('"issuer" must be an https URL without query or fragment (http only on loopback)')
  }
  const fetchImpl = checkOptionalFunction(options.fetch, 'fetch') ?? globalThis.fetch
  const timeoutMs = checkIntegerInRange(options.timeoutMs ?? 10_000, 'timeoutMs', 100, 60_000)
  // OIDC Discovery §4: strip one terminating "/" from the issuer, then append the well-known path.
  const url = `${issuer.endsWith('/') ? issuer.slice(0, -1) : issuer}/.well-known/openid-configuration`

  let response
  try {
    response = await requestJson(url, { headers: { accept: 'application/json' } }, { fetch: fetchImpl, timeoutMs, maxBytes: MAX_DISCOVERY_BYTES })
  } catch (cause) {
    if (cause instanceof HttpJsonFailed) throw new OidcDiscoveryFailed(`discovery document unavailable: ${cause.message}`, { cause })
    throw cause
  }
  if (response.status !== 200) throw new OidcDiscoveryFailed(`discovery document answered ${response.status}`)
  return Object.freeze(toMetadata(response.body, issuer))
}

function toMetadata(document: unknown, issuer: string): OidcProviderMetadata {
  if (!isPlainObject(document)) throw new OidcDiscoveryFailed('discovery document is not a JSON object')
  // OIDC Discovery §4.3: the issuer must be identical, or tokens from another issuer could pass as ours.
  if (document['issuer'] !== issuer) {
    throw new OidcDiscoveryFailed(`discovery issuer ${JSON.stringify(document['issuer'])} is not ${issuer}`)
  }
  const responseTypes = stringList(document, 'response_types_supported')
  if (!responseTypes?.includes('code')) throw new OidcDiscoveryFailed('provider does not support response_type=code')
  // Absent means "not advertised" (some providers omit it yet support PKCE); present without S256 is a refusal.
  const pkceMethods = stringList(document, 'code_challenge_methods_supported')
  if (pkceMethods && !pkceMethods.includes('S256')) throw new OidcDiscoveryFailed('provider does not support PKCE S256')
  const algs = stringList(document, 'id_token_signing_alg_values_supported') ?? []
  if (!algs.some((alg) => ASYMMETRIC_ALGORITHMS.includes(alg))) {
    throw new OidcDiscoveryFailed('provider signs ID tokens with no algorithm we accept')
  }
  const endSession = document['end_session_endpoint']
  return {
    issuer,
    authorizationEndpoint: endpoint(document, 'authorization_endpoint'),
    tokenEndpoint: endpoint(document, 'token_endpoint'),
    jwksUri: endpoint(document, 'jwks_uri'),
    ...(endSession === undefined ? {} : { endSessionEndpoint: endpoint(document, 'end_session_endpoint') }),
    isIssParameterSupported: document['authorization_response_iss_parameter_supported'] === true,
    idTokenSigningAlgValuesSupported: Object.freeze(algs),
  }
}

function endpoint(document: Record<string, unknown>, field: string): string {
  const value = document[field]
  if (!isAllowedProviderUrl(value)) {
    throw new OidcDiscoveryFailed(`discovery ${field} is missing or not an https URL`)
  }
  return value
}

function stringList(document: Record<string, unknown>, field: string): string[] | undefined {
  const value = document[field]
  if (value === undefined) return undefined
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new OidcDiscoveryFailed(`discovery ${field} is not a list of strings`)
  }
  return value as string[]
}
