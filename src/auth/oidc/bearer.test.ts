import assert from 'node:assert/strict'
import { createPublicKey, randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { base64url, decodeJwt, generateKeyPair, SignJWT } from 'jose'
import type { JWTPayload } from 'jose'
import { createTestClock, startOidcProvider } from '../../../test/support/oidc-provider.ts'
import type { OidcTestProvider } from '../../../test/support/oidc-provider.ts'
import { createOidcBearerValidator } from './bearer.ts'
import { createOidcKeySet } from './key-set.ts'
import type { OidcBearerValidatorOptions } from './bearer.ts'
import { InvalidBearerToken } from './errors.ts'

const AUDIENCE = 'https://api.sitegrid.test'
const TOLERANCE_SEC = 30
const ALICE = { oid: '6f1c2a9e-0000-4000-8000-00000000a11c', email: 'alice@acme.test', name: 'Alice', org_slug: 'acme' }

describe('OIDC bearer validator against a real provider', () => {
  let op: OidcTestProvider
  before(async () => {
    op = await startOidcProvider({
      clients: [{ client_id: 'console', client_secret: 'console-secret-0123456789abcdef', redirect_uris: ['https://acme.sitegrid.test/auth/callback'] }],
      accounts: { alice: ALICE },
      audience: AUDIENCE,
    })
  })
  after(() => op.stop())

  const validatorFor = (clock = createTestClock(), overrides: Partial<OidcBearerValidatorOptions> = {}) =>
    createOidcBearerValidator({
      issuer: op.issuer,
      audience: AUDIENCE,
      clockToleranceSec: TOLERANCE_SEC,
      jwksUri: op.jwksUri,
      clock: clock.now,
      ...overrides,
    })
  const nowSec = () => Math.floor(Date.now() / 1000)
  const validClaims = (extra: JWTPayload = {}): JWTPayload => ({
    iss: op.issuer,
    aud: AUDIENCE,
    sub: 'pairwise-alice',
    oid: ALICE.oid,
    org_slug: 'acme',
    iat: nowSec(),
    exp: nowSec() + 600,
    ...extra,
  })
  async function rejection(validate: (token: string) => unknown, token: string): Promise<InvalidBearerToken> {
    // A refusal is a rejection, never a throw (a remembered token's identity comes at once, not in a promise).
    const error = await Promise.resolve(validate(token)).then(
      () => undefined,
      (e: unknown) => e,
    )
    assert.ok(error instanceof InvalidBearerToken, `expected InvalidBearerToken, got ${String(error)}`)
    return error
  }

  it('a provider-issued access token yields oid, pairwise sub and org slug, with sub different from oid', async () => {
    const token = await op.issueAccessToken('alice')
    const identity = await validatorFor()(token)
    assert.equal(identity.oid, ALICE.oid)
    assert.equal(identity.orgSlug, 'acme')
    assert.equal(identity.sub, decodeJwt(token).sub)
    assert.notEqual(identity.sub, identity.oid)
  })

  it('an unsigned token (alg none) is refused as an algorithm not allowed', async () => {
    const encode = (part: object) => base64url.encode(JSON.stringify(part))
    const token = `${encode({ alg: 'none', typ: 'at+jwt', kid: op.currentKid() })}.${encode(validClaims())}.`
    assert.equal((await rejection(validatorFor(), token)).reason, 'ERR_JOSE_ALG_NOT_ALLOWED')
  })

  it('HS256 signed with the provider public key as the HMAC secret is refused (algorithm confusion)', async () => {
    const jwks = (await (await fetch(op.jwksUri)).json()) as { keys: Record<string, string>[] }
    const pem = createPublicKey({ key: jwks.keys[0] as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' })
    const token = await new SignJWT(validClaims()).setProtectedHeader({ alg: 'HS256', kid: op.currentKid() }).sign(new TextEncoder().encode(pem.toString()))
    assert.equal((await rejection(validatorFor(), token)).reason, 'ERR_JOSE_ALG_NOT_ALLOWED')
  })

  it('a provider token whose payload was altered fails signature verification', async () => {
    const [header, payload, signature] = (await op.issueAccessToken('alice')).split('.')
    const altered = { ...decodeJwt(`${header}.${payload}.${signature}`), org_slug: 'other-org' }
    const token = `${header}.${base64url.encode(JSON.stringify(altered))}.${signature}`
    assert.equal((await rejection(validatorFor(), token)).reason, 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED')
  })

  it('a token signed by another key under the provider kid fails signature verification', async () => {
    const { privateKey } = await generateKeyPair('RS256')
    const token = await new SignJWT(validClaims()).setProtectedHeader({ alg: 'RS256', kid: op.currentKid() }).sign(privateKey)
    assert.equal((await rejection(validatorFor(), token)).reason, 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED')
  })

  it('a token signed by an unknown kid is refused after the key set is checked', async () => {
    const { privateKey } = await generateKeyPair('RS256')
    const token = await new SignJWT(validClaims()).setProtectedHeader({ alg: 'RS256', kid: randomUUID() }).sign(privateKey)
    assert.equal((await rejection(validatorFor(), token)).reason, 'ERR_JWKS_NO_MATCHING_KEY')
  })

  it('a correctly signed token from another issuer is refused on iss', async () => {
    const error = await rejection(validatorFor(), await op.signJwt(validClaims({ iss: 'https://evil.example' })))
    assert.equal(error.reason, 'ERR_JWT_CLAIM_VALIDATION_FAILED')
    assert.equal(error.claim, 'iss')
  })

  it('a real provider token for another resource server is refused on aud', async () => {
    const token = await op.issueAccessToken('alice', { audience: 'https://other-api.example' })
    const error = await rejection(validatorFor(), token)
    assert.equal(error.reason, 'ERR_JWT_CLAIM_VALIDATION_FAILED')
    assert.equal(error.claim, 'aud')
  })

  it('a token past exp beyond the clock tolerance is refused as expired; within tolerance it passes', async () => {
    const token = await op.issueAccessToken('alice', { expiresInSec: 60 })
    const clock = createTestClock()
    const validate = validatorFor(clock)
    clock.advance((60 + TOLERANCE_SEC - 5) * 1000)
    assert.equal((await validate(token)).orgSlug, 'acme')
    clock.advance(10_000)
    const error = await rejection(validate, token)
    assert.equal(error.reason, 'ERR_JWT_EXPIRED')
    assert.equal(error.claim, 'exp')
  })

  it('a token verified once passes again without a second signature check (issue 29); a forged copy is still checked', async () => {
    const clock = createTestClock()
    const keySet = createOidcKeySet({ jwksUri: op.jwksUri, clock: clock.now })
    await keySet.load() // as at start-up: a token verified while the first fetch replaced the keys is checked again
    let keyLookups = 0
    const counting = { ...keySet, getKey: (...args: Parameters<typeof keySet.getKey>) => (keyLookups++, keySet.getKey(...args)) }
    const validate = validatorFor(clock, { jwksUri: undefined, keySet: counting })
    const token = await op.issueAccessToken('alice', { expiresInSec: 60 })
    assert.equal(validate.remembered(token), undefined)
    assert.equal((await validate(token)).oid, ALICE.oid)
    assert.equal(validate.remembered(token)?.oid, ALICE.oid)
    const again = validate(token)
    assert.ok(!(again instanceof Promise), 'a remembered token is answered at once, without a promise')
    assert.equal((await again).oid, ALICE.oid)
    assert.equal(keyLookups, 1)
    const [header, payload, signature] = token.split('.')
    const forged = `${header}.${payload}.${signature!.slice(0, -4)}AAAA`
    assert.equal(validate.remembered(forged), undefined)
    assert.equal((await rejection(validate, forged)).reason, 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED')
    assert.equal(keyLookups, 2)
    // Remembered, it still expires exactly as jose would refuse it: past exp by more than the tolerance.
    clock.advance((60 + TOLERANCE_SEC - 5) * 1000)
    assert.equal((await validate(token)).oid, ALICE.oid)
    assert.equal(keyLookups, 2)
    clock.advance(10_000)
    assert.equal(validate.remembered(token), undefined, 'past exp and the tolerance: no longer remembered')
    assert.equal((await rejection(validate, token)).reason, 'ERR_JWT_EXPIRED')
  })

  it('a token whose nbf lies beyond the clock tolerance is refused; within tolerance it passes', async () => {
    const validate = validatorFor()
    const early = await rejection(validate, await op.signJwt(validClaims({ nbf: nowSec() + TOLERANCE_SEC + 60 })))
    assert.equal(early.reason, 'ERR_JWT_CLAIM_VALIDATION_FAILED')
    assert.equal(early.claim, 'nbf')
    const identity = await validate(await op.signJwt(validClaims({ nbf: nowSec() + TOLERANCE_SEC - 10 })))
    assert.equal(identity.oid, ALICE.oid)
  })

  for (const claim of ['oid', 'org_slug', 'sub', 'exp'] as const) {
    it(`a correctly signed token without ${claim} is refused on ${claim}`, async () => {
      const { [claim]: _dropped, ...claims } = validClaims()
      const error = await rejection(validatorFor(), await op.signJwt(claims))
      assert.equal(error.reason, 'ERR_JWT_CLAIM_VALIDATION_FAILED')
      assert.equal(error.claim, claim)
    })
  }

  it('an empty oid or a non-string org_slug is refused like a missing one', async () => {
    assert.equal((await rejection(validatorFor(), await op.signJwt(validClaims({ oid: '' })))).claim, 'oid')
    assert.equal((await rejection(validatorFor(), await op.signJwt(validClaims({ org_slug: 42 })))).claim, 'org_slug')
  })

  it('a sender-constrained token (cnf) presented as a plain bearer is refused', async () => {
    const error = await rejection(validatorFor(), await op.signJwt(validClaims({ cnf: { jkt: 'thumbprint' } })))
    assert.equal(error.claim, 'cnf')
  })

  it('a JWT of another type (logout+jwt) is refused even when correctly signed', async () => {
    const error = await rejection(validatorFor(), await op.signJwt(validClaims(), { typ: 'logout+jwt' }))
    assert.equal(error.claim, 'typ')
  })

  it('an oversized or non-string token is refused before any parsing', async () => {
    assert.equal((await rejection(validatorFor(), 'a'.repeat(20_000))).reason, 'ERR_TOKEN_TOO_LARGE')
    assert.equal((await rejection(validatorFor(), 42 as unknown as string)).reason, 'ERR_JWT_INVALID')
    assert.equal((await rejection(validatorFor(), 'not.a.jwt')).reason, 'ERR_JWS_INVALID')
  })

  it('an algorithm outside the configured allowlist is refused even if the provider signed it', async () => {
    const validate = validatorFor(createTestClock(), { algorithms: ['ES256'] })
    assert.equal((await rejection(validate, await op.issueAccessToken('alice'))).reason, 'ERR_JOSE_ALG_NOT_ALLOWED')
  })
})

describe('OIDC bearer validator with an ES256 provider', () => {
  it('an ES256-signed provider token validates under the default allowlist', async (t) => {
    const op = await startOidcProvider({
      clients: [{ client_id: 'console', client_secret: 'console-secret-0123456789abcdef', redirect_uris: ['https://acme.sitegrid.test/auth/callback'] }],
      accounts: { alice: ALICE },
      audience: AUDIENCE,
      alg: 'ES256',
    })
    t.after(() => op.stop())
    const validate = createOidcBearerValidator({
      issuer: op.issuer,
      audience: AUDIENCE,
      clockToleranceSec: 0,
      jwksUri: op.jwksUri,
      clock: createTestClock().now,
    })
    assert.equal((await validate(await op.issueAccessToken('alice'))).oid, ALICE.oid)
  })
})

describe('OIDC bearer validator options', () => {
  const base: OidcBearerValidatorOptions = {
    issuer: 'https://login.example',
    audience: AUDIENCE,
    clockToleranceSec: 30,
    jwksUri: 'https://login.example/jwks',
    clock: () => new Date(),
  }
  const misuses: [string, Partial<Record<keyof OidcBearerValidatorOptions, unknown>>][] = [
    ['HS256 in the algorithm allowlist', { algorithms: ['RS256', 'HS256'] }],
    ['none in the algorithm allowlist', { algorithms: ['none'] }],
    ['an empty algorithm allowlist', { algorithms: [] }],
    ['a negative clock tolerance', { clockToleranceSec: -1 }],
    ['a missing clock tolerance', { clockToleranceSec: undefined }],
    ['an empty audience', { audience: '' }],
    ['an empty issuer', { issuer: '' }],
    ['a missing clock', { clock: undefined }],
    ['an http key set URL off loopback', { jwksUri: 'http://login.example/jwks' }],
    ['a refetch interval under one second', { jwksRefetchIntervalMs: 10 }],
    ['a fetch that is not a function', { fetch: 'fetch' }],
    ['neither jwksUri nor keySet', { jwksUri: undefined }],
  ]
  for (const [what, override] of misuses) {
    it(`building a validator with ${what} throws TypeError`, () => {
      assert.throws(() => createOidcBearerValidator({ ...base, ...override } as OidcBearerValidatorOptions), TypeError)
    })
  }
})
