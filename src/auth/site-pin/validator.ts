import { decodeProtectedHeader, errors, jwtVerify } from 'jose'
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../clock.ts'
import type { BearerValidator } from '../../http/auth.ts'
import type { Org, Principal } from '../../identity.ts'
import type { SigningKeys } from './signing-keys.ts'
import type { SiteUserCredentials } from './site-users.ts'
import { CLOCK_TOLERANCE_S, SIGNING_ALG, SITE_AUDIENCE, SITE_ISSUER } from './token-policy.ts'

const MAX_TOKEN_LENGTH = 4096
/**
 * The kids this server mints: RFC 7638 thumbprints (base64url SHA-256). The header is read before any signature is
 * checked, so any other kid is unknown without asking the database (PostgreSQL refuses a NUL in text: a 500).
 */
const KID_PATTERN = /^[A-Za-z0-9_-]{43}$/

/**
 * The local validator of the auth selector: claims bearer tokens whose issuer ends in `-local` and verifies
 * them against the organisation's own key set (signature ES256 only, iss, aud, exp, typ). The site role comes
 * from the site user's row, read on every request, so a removal, demotion or PIN change takes effect at once.
 * Any failure is `undefined`: the caller answers the uniform 401; jose's reason goes to the debug log.
 */
export function createSitePinValidator(deps: {
  signingKeys: SigningKeys
  siteUsers: Pick<SiteUserCredentials, 'credentialState'>
  clock: Clock
  log: FastifyBaseLogger
}): BearerValidator {
  const { signingKeys, siteUsers, clock, log } = deps
  return {
    accepts: (issuer) => issuer.endsWith('-local'),
    async validate(token: string, org: Org): Promise<Principal | undefined> {
      if (token.length > MAX_TOKEN_LENGTH) return undefined
      let header
      try {
        header = decodeProtectedHeader(token)
      } catch {
        return undefined
      }
      try {
        if (typeof header.kid !== 'string' || !KID_PATTERN.test(header.kid) || header.alg !== SIGNING_ALG || header.typ !== 'at+jwt') return undefined
        const key = await signingKeys.verificationKey(org.id, header.kid)
        if (!key) return undefined
        const { payload } = await jwtVerify(token, key, {
          issuer: SITE_ISSUER,
          audience: SITE_AUDIENCE,
          algorithms: [SIGNING_ALG],
          typ: 'at+jwt',
          clockTolerance: CLOCK_TOLERANCE_S,
          currentDate: new Date(clock.now()),
          requiredClaims: ['iss', 'aud', 'exp', 'iat', 'sub', 'org', 'ver'],
        })
        if (payload.org !== org.id || typeof payload.sub !== 'string' || payload.oid !== undefined) return undefined
        const user = await siteUsers.credentialState(org.id, payload.sub)
        if (!user || user.tokenVersion !== payload.ver) return undefined
        return { orgId: org.id, kind: 'sitePin', role: user.role, subject: user.id, isPlatformAdmin: false }
      } catch (err) {
        if (err instanceof errors.JOSEError) {
          log.debug({ event: 'site_pin.token_refused', reason: err.code }, 'site-PIN token refused')
          return undefined
        }
        throw err
      }
    },
  }
}
