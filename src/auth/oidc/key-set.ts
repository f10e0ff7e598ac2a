import { createLocalJWKSet, errors } from 'jose'
import type { CryptoKey, FlattenedJWSInput, JSONWebKeySet, JWK, JWSHeaderParameters } from 'jose'
import { JwksFetchFailed } from './errors.ts'
import { isAllowedProviderUrl, isPlainObject, requestJson } from './http-json.ts'
import type { FetchLike } from './http-json.ts'
import { checkFunction, checkIntegerInRange, checkOptionalFunction } from './options.ts'

export interface OidcKeySetOptions {
  jwksUri: string
  clock: () => Date
  fetch?: FetchLike
  /** Minimum time between two fetches of the key set; default 30 s. */
  refetchIntervalMs?: number
  timeoutMs?: number
}

/** The provider's signing keys, cached in memory and shared by the bearer and ID-token checks. */
export interface OidcKeySet {
  /** jose key resolver. Cached keys only; an unknown `kid` refetches, at most once per interval. */
  readonly getKey: (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>
  /** Fetches the key set now: call it at start-up so no request waits for it. Throws JwksFetchFailed. */
  readonly load: () => Promise<void>
  /** Moves whenever a fetch replaced the keys: what was verified with the previous keys is to be verified again. */
  readonly version: () => number
}

const DEFAULT_REFETCH_INTERVAL_MS = 30_000
const MAX_JWKS_BYTES = 256 * 1024
const MAX_KEYS = 100
const PUBLIC_KEY_TYPES = new Set(['RSA', 'EC', 'OKP'])

/** Builds a key set; throws TypeError on bad options. Nothing is fetched until `load` or a first token. */
export function createOidcKeySet(options: OidcKeySetOptions): OidcKeySet {
  if (!isAllowedProviderUrl(options.jwksUri)) throw new TypeError('"jwksUri" must be an https URL (http only on loopback)')
  const clock = checkFunction(options.clock, 'clock')
  const fetchImpl = checkOptionalFunction(options.fetch, 'fetch') ?? globalThis.fetch
  const intervalMs = checkIntegerInRange(options.refetchIntervalMs ?? DEFAULT_REFETCH_INTERVAL_MS, 'refetchIntervalMs', 1_000, 86_400_000)
  const timeoutMs = checkIntegerInRange(options.timeoutMs ?? 5_000, 'timeoutMs', 100, 60_000)
  const { jwksUri } = options

  let local: ReturnType<typeof createLocalJWKSet> | undefined
  let lastFetchAtMs: number | undefined
  let inFlight: Promise<void> | undefined
  let version = 0

  async function fetchKeys(): Promise<void> {
    lastFetchAtMs = clock().getTime()
    try {
      const { status, body } = await requestJson(
        jwksUri,
        { headers: { accept: 'application/json' } },
        { fetch: fetchImpl, timeoutMs, maxBytes: MAX_JWKS_BYTES },
      )
      if (status !== 200) throw new JwksFetchFailed(`key set answered ${status}`)
      local = createLocalJWKSet(toPublicKeySet(body))
      version++
    } catch (cause) {
      // The previous keys stay in use: a provider outage must not unseat tokens we can still verify.
      throw cause instanceof JwksFetchFailed ? cause : new JwksFetchFailed('key set unavailable', { cause })
    }
  }

  // Single flight, rate-limited: a flood of random kids costs at most one fetch per interval.
  async function refetch(): Promise<boolean> {
    if (inFlight) {
      await inFlight
      return true
    }
    const elapsedMs = lastFetchAtMs === undefined ? Infinity : clock().getTime() - lastFetchAtMs
    // A clock set back (elapsed < 0) must not lock refetching out until it catches up.
    if (elapsedMs >= 0 && elapsedMs < intervalMs) return false
    inFlight = fetchKeys().finally(() => {
      inFlight = undefined
    })
    await inFlight
    return true
  }

  return Object.freeze({
    version: () => version,
    async load() {
      await (inFlight ??= fetchKeys().finally(() => {
        inFlight = undefined
      }))
    },
    async getKey(header: JWSHeaderParameters, token: FlattenedJWSInput) {
      if (local) {
        try {
          return await local(header, token)
        } catch (error) {
          if (!(error instanceof errors.JWKSNoMatchingKey)) throw error
        }
      }
      if (!(await refetch()) || !local) throw new errors.JWKSNoMatchingKey()
      return local(header, token)
    },
  })
}

function toPublicKeySet(body: unknown): JSONWebKeySet {
  if (!isPlainObject(body) || !Array.isArray(body['keys'])) throw new JwksFetchFailed('key set has no "keys" array')
  if (body['keys'].length > MAX_KEYS) throw new JwksFetchFailed(`key set has more than ${MAX_KEYS} keys`)
  // Only public asymmetric keys can verify; a symmetric or private member is dropped, never used.
  const keys = body['keys'].filter(
    (jwk: unknown): jwk is JWK => isPlainObject(jwk) && typeof jwk['kty'] === 'string' && PUBLIC_KEY_TYPES.has(jwk['kty']) && !('d' in jwk),
  )
  return { keys }
}
