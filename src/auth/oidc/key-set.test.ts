import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { generateKeyPair, SignJWT } from 'jose'
import type { CryptoKey } from 'jose'
import { createTestClock, startOidcProvider } from '../../../test/support/oidc-provider.ts'
import type { OidcTestProvider } from '../../../test/support/oidc-provider.ts'
import { createOidcBearerValidator } from './bearer.ts'
import { InvalidBearerToken, JwksFetchFailed } from './errors.ts'
import { createOidcKeySet } from './key-set.ts'

const AUDIENCE = 'https://api.sitegrid.test'
const INTERVAL_MS = 30_000

/** Counts key-set requests as they leave the relying party; `isDown` makes them fail like an outage. */
function countingFetch(jwksUri: string) {
  const state = { jwksRequests: 0, isDown: false }
  const fetchImpl: typeof fetch = async (input, init) => {
    if (String(input) === jwksUri) state.jwksRequests += 1
    if (state.isDown) throw new TypeError('fetch failed')
    return fetch(input, init)
  }
  return { state, fetch: fetchImpl }
}

async function reasonOf(validated: unknown): Promise<string> {
  const error = await Promise.resolve(validated).then(
    () => undefined,
    (e: unknown) => e,
  )
  assert.ok(error instanceof InvalidBearerToken, `expected InvalidBearerToken, got ${String(error)}`)
  return error.reason
}

describe('OIDC key set: caching, rotation and refetch limits', () => {
  let op: OidcTestProvider
  let attackerKey: CryptoKey
  before(async () => {
    op = await startOidcProvider({
      clients: [{ client_id: 'console', client_secret: 'console-secret-0123456789abcdef', redirect_uris: ['https://acme.sitegrid.test/auth/callback'] }],
      accounts: { alice: { oid: 'oid-alice', email: 'alice@acme.test', name: 'Alice', org_slug: 'acme' } },
      audience: AUDIENCE,
    })
    attackerKey = (await generateKeyPair('RS256')).privateKey
  })
  after(() => op.stop())

  function setup() {
    const clock = createTestClock()
    const counter = countingFetch(op.jwksUri)
    const keySet = createOidcKeySet({ jwksUri: op.jwksUri, clock: clock.now, fetch: counter.fetch, refetchIntervalMs: INTERVAL_MS })
    const validate = createOidcBearerValidator({ issuer: op.issuer, audience: AUDIENCE, clockToleranceSec: 30, clock: clock.now, keySet })
    return { clock, counter, keySet, validate }
  }
  const randomKidToken = () =>
    new SignJWT({ iss: op.issuer, aud: AUDIENCE, sub: 's', oid: 'o', org_slug: 'acme' })
      .setProtectedHeader({ alg: 'RS256', kid: randomUUID() })
      .setExpirationTime('5m')
      .sign(attackerKey)

  it('validating many tokens after start-up makes no further key-set request', async () => {
    const { counter, keySet, validate } = setup()
    await keySet.load()
    for (let i = 0; i < 5; i += 1) await validate(await op.issueAccessToken('alice'))
    assert.equal(counter.state.jwksRequests, 1)
  })

  it('a validator without load fetches the key set once, on the first token', async () => {
    const { counter, validate } = setup()
    await Promise.all([validate(await op.issueAccessToken('alice')), validate(await op.issueAccessToken('alice'))])
    assert.equal(counter.state.jwksRequests, 1)
  })

  it('after a provider key rotation, new tokens validate after one refetch and old-kid tokens stop validating', async (t) => {
    const rotating = await startOidcProvider({
      clients: [{ client_id: 'console', client_secret: 'console-secret-0123456789abcdef', redirect_uris: ['https://acme.sitegrid.test/auth/callback'] }],
      accounts: { alice: { oid: 'oid-alice', email: 'alice@acme.test', name: 'Alice', org_slug: 'acme' } },
      audience: AUDIENCE,
    })
    t.after(() => rotating.stop())
    const clock = createTestClock()
    const counter = countingFetch(rotating.jwksUri)
    const validate = createOidcBearerValidator({
      issuer: rotating.issuer,
      audience: AUDIENCE,
      clockToleranceSec: 30,
      clock: clock.now,
      jwksUri: rotating.jwksUri,
      fetch: counter.fetch,
      jwksRefetchIntervalMs: INTERVAL_MS,
    })
    const oldToken = await rotating.issueAccessToken('alice')
    await validate(oldToken)
    const oldKid = rotating.currentKid()

    const newKid = await rotating.rotateKeys()
    assert.notEqual(newKid, oldKid)
    const newToken = await rotating.issueAccessToken('alice')
    // Within the interval of the last fetch the new kid is not looked up yet.
    assert.equal(await reasonOf(validate(newToken)), 'ERR_JWKS_NO_MATCHING_KEY')
    assert.equal(counter.state.jwksRequests, 1)

    clock.advance(INTERVAL_MS)
    const identity = await validate(newToken)
    assert.equal(identity.oid, 'oid-alice')
    assert.equal(counter.state.jwksRequests, 2)
    await validate(await rotating.issueAccessToken('alice'))
    assert.equal(counter.state.jwksRequests, 2)
    assert.equal(await reasonOf(validate(oldToken)), 'ERR_JWKS_NO_MATCHING_KEY')
  })

  it('a flood of tokens with random kids causes at most one key-set request per interval', async () => {
    const { clock, counter, keySet, validate } = setup()
    await keySet.load()
    clock.advance(INTERVAL_MS)
    const flood = await Promise.all(Array.from({ length: 40 }, async () => reasonOf(validate(await randomKidToken()))))
    assert.deepEqual(new Set(flood), new Set(['ERR_JWKS_NO_MATCHING_KEY']))
    assert.equal(counter.state.jwksRequests, 2)
    for (let i = 0; i < 40; i += 1) await reasonOf(validate(await randomKidToken()))
    assert.equal(counter.state.jwksRequests, 2)
    clock.advance(INTERVAL_MS - 1)
    await reasonOf(validate(await randomKidToken()))
    assert.equal(counter.state.jwksRequests, 2)
    clock.advance(1)
    await Promise.all(Array.from({ length: 40 }, async () => reasonOf(validate(await randomKidToken()))))
    assert.equal(counter.state.jwksRequests, 3)
    // Genuine tokens kept validating from the cache throughout.
    assert.equal((await validate(await op.issueAccessToken('alice'))).orgSlug, 'acme')
  })

  it('when the key set cannot be fetched, unknown kids fail with ERR_JWKS_FETCH_FAILED and cached keys keep working', async () => {
    const { clock, counter, keySet, validate } = setup()
    await keySet.load()
    counter.state.isDown = true
    clock.advance(INTERVAL_MS)
    assert.equal(await reasonOf(validate(await randomKidToken())), 'ERR_JWKS_FETCH_FAILED')
    assert.equal((await validate(await op.issueAccessToken('alice'))).oid, 'oid-alice')
    // The failed attempt counts against the interval: an outage is not hammered (the load, then the failed GET and
    // its one immediate retry, http-json.ts).
    assert.equal(await reasonOf(validate(await randomKidToken())), 'ERR_JWKS_NO_MATCHING_KEY')
    assert.equal(counter.state.jwksRequests, 3)
  })

  it('load at start-up reports an unreachable key set as JwksFetchFailed', async () => {
    const counter = countingFetch(op.jwksUri)
    counter.state.isDown = true
    const keySet = createOidcKeySet({ jwksUri: op.jwksUri, clock: () => new Date(), fetch: counter.fetch })
    await assert.rejects(keySet.load(), JwksFetchFailed)
  })

  it('a key-set document without a keys array is refused as JwksFetchFailed', async () => {
    const fakeFetch: typeof fetch = async () => Response.json({ not_keys: [] })
    const keySet = createOidcKeySet({ jwksUri: op.jwksUri, clock: () => new Date(), fetch: fakeFetch })
    await assert.rejects(keySet.load(), JwksFetchFailed)
  })
})
