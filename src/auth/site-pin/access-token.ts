import { randomUUID } from 'node:crypto'
import { SignJWT } from 'jose'
import type { Org } from '../../identity.ts'
import type { SigningKey } from './signing-keys.ts'
import type { SiteUserCredential } from './site-users.ts'
import { ACCESS_TOKEN_TTL_S, SIGNING_ALG, SITE_AUDIENCE, SITE_ISSUER } from './token-policy.ts'

/**
 * A site-PIN access token: sub (site user id), org (organisation id), org_slug, site_role and ver (the
 * user's token version). No `oid` and no organisation role: it carries no cloud authority (spec 5 rule 7).
 */
export async function issueAccessToken(key: SigningKey, org: Org, user: SiteUserCredential, nowMs: number): Promise<{ token: string; expiresAt: number }> {
  const iat = Math.floor(nowMs / 1000)
  const exp = iat + ACCESS_TOKEN_TTL_S
  const token = await new SignJWT({ org: org.id, org_slug: org.slug, site_role: user.role, ver: user.tokenVersion })
    .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: 'at+jwt' })
    .setIssuer(SITE_ISSUER)
    .setAudience(SITE_AUDIENCE)
    .setSubject(user.id)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(randomUUID())
    .sign(key.key)
  return { token, expiresAt: exp * 1000 }
}
