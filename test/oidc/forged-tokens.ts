import { createPublicKey } from 'node:crypto'
import { base64url, generateKeyPair, SignJWT } from 'jose'
import type { JWTPayload } from 'jose'
import { AUDIENCE, fetchProviderJwks, type IdentityHarness } from './identity-harness.ts'

export const nowSec = () => Math.floor(Date.now() / 1000)

/** The claims of a valid provider access token for `accountId` at the harness's organisation, with `extra` over them. */
export function claimsFor(h: IdentityHarness, accountId: string, extra: JWTPayload = {}): JWTPayload {
  return {
    iss: h.op.issuer,
    aud: AUDIENCE,
    sub: `pairwise-${accountId}`,
    oid: h.oidOf(accountId),
    org_slug: h.org.slug,
    iat: nowSec(),
    exp: nowSec() + 600,
    ...extra,
  }
}

/**
 * Bearer tokens for `accountId` (an active member) that must each get the uniform 401: forged, altered, signed
 * with the wrong key or algorithm, or with a claim out of bounds. Shared by test/oidc/bearer-forged.test.ts and
 * test/hardening/authentication.test.ts.
 */
export async function forgedBearerTokens(h: IdentityHarness, accountId: string): Promise<Record<string, string>> {
  const encode = (part: object) => base64url.encode(JSON.stringify(part))
  const claims = (extra: JWTPayload = {}) => claimsFor(h, accountId, extra)
  const jwks = await fetchProviderJwks(h.op)
  const pem = createPublicKey({ key: jwks.keys[0] as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' })
  const { privateKey } = await generateKeyPair('RS256')
  const [header, , signature] = (await h.token(accountId)).split('.')
  return {
    'alg none': `${encode({ alg: 'none', typ: 'at+jwt', kid: h.op.currentKid() })}.${encode(claims())}.`,
    "HS256 keyed with the provider's RSA public key": await new SignJWT(claims())
      .setProtectedHeader({ alg: 'HS256', kid: h.op.currentKid() })
      .sign(new TextEncoder().encode(pem.toString())),
    'wrong iss': await h.op.signJwt(claims({ iss: 'https://evil.example' })),
    'wrong aud': await h.op.signJwt(claims({ aud: 'https://another-api.example' })),
    'exp past (beyond the skew)': await h.op.signJwt(claims({ exp: nowSec() - 120 })),
    'nbf future': await h.op.signJwt(claims({ nbf: nowSec() + 600 })),
    'no oid': await h.op.signJwt(claims({ oid: undefined })),
    'unknown kid': await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'unknown-kid' }).sign(privateKey),
    'another key under the provider kid': await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: h.op.currentKid() }).sign(privateKey),
    'altered payload': `${header}.${encode(claims({ sub: 'someone-else' }))}.${signature}`,
    'broken signature': `${await h.token(accountId)}x`,
  }
}
