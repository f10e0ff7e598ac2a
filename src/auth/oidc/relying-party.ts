import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../clock.ts'
import type { OidcConfig } from '../../config/schema.ts'
import { createOidcBearerValidator, type OidcBearerValidator } from './bearer.ts'
import { discoverOidcProvider, type OidcProviderMetadata } from './discovery.ts'
import { createOidcKeySet, type OidcKeySet } from './key-set.ts'

/** Everything the cell needs from its provider, loaded once at start-up so no request waits on the provider. */
export interface RelyingParty {
  readonly config: OidcConfig
  readonly metadata: OidcProviderMetadata
  readonly keySet: OidcKeySet
  readonly validateBearer: OidcBearerValidator
  readonly jwtClock: () => Date
}

/** Reads the discovery document and the key set; throws OidcDiscoveryFailed or JwksFetchFailed (start-up failures). */
export async function startRelyingParty(config: OidcConfig, clock: Clock, log: FastifyBaseLogger): Promise<RelyingParty> {
  const jwtClock = () => new Date(clock.now())
  const metadata = await discoverOidcProvider({ issuer: config.issuer })
  const keySet = createOidcKeySet({ jwksUri: metadata.jwksUri, clock: jwtClock })
  await keySet.load()
  const validateBearer = createOidcBearerValidator({
    issuer: metadata.issuer,
    audience: config.audience,
    clockToleranceSec: config.clockSkewSec,
    clock: jwtClock,
    keySet,
  })
  log.info({ issuer: metadata.issuer, browserSignIn: config.client !== undefined }, 'OIDC provider loaded')
  return Object.freeze({ config, metadata, keySet, validateBearer, jwtClock })
}
