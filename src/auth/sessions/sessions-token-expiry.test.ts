import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { postSession, signIn } from '../../../test/oidc/browser-flow.ts'
import { AUDIENCE, identityHarness, startSharedProvider, type SharedProvider } from '../../../test/oidc/identity-harness.ts'
import { SESSION_TTL_MS } from './service.ts'

// A hostile or broken identity provider's `expires_in` (RFC 6749 §5.1: the access token's lifetime in seconds). The
// real provider answers; only that field of its token answer is replaced (test/support/oidc-provider.ts tokenResponse).
let expiresIn: unknown = undefined
/** A token signed by the provider's key to answer instead of the access token it issued (a claim it always sets left out). */
let replaceAccessToken: string | undefined
let shared: SharedProvider
before(async () => {
  shared = await startSharedProvider({
    tokenResponse(body) {
      if (replaceAccessToken !== undefined) body['access_token'] = replaceAccessToken
      if (expiresIn === undefined) return
      if (expiresIn === 'absent') delete body['expires_in']
      else body['expires_in'] = expiresIn
    },
  })
})
after(() => shared.stop())

const FIVE_MINUTES_MS = 5 * 60_000

for (const dialect of testDialects()) {
  describe(`${dialect}: browser sessions: the access token's lifetime the provider states`, () => {
    for (const [stated, lifetimeMs] of [
      [1e300, SESSION_TTL_MS],
      ['1e300', SESSION_TTL_MS],
      [Number.MAX_SAFE_INTEGER, SESSION_TTL_MS],
      [13 * 3600, SESSION_TTL_MS],
      [-60, FIVE_MINUTES_MS],
      [0, FIVE_MINUTES_MS],
      [2.5, FIVE_MINUTES_MS],
      ['soon', FIVE_MINUTES_MS],
      ['absent', FIVE_MINUTES_MS],
      [600, 600_000],
    ] as const) {
      it(`expires_in ${JSON.stringify(stated)}: the session's access token lives ${lifetimeMs / 60_000} min (never past the session's 12 hours)`, async (t) => {
        const h = await identityHarness(t, dialect, shared)
        await h.activate('ada', 'member')
        expiresIn = stated
        t.after(() => {
          expiresIn = undefined
        })
        const signedInAt = h.clock.now()
        const { callback, session } = await signIn(h, 'ada')
        assert.equal(callback.statusCode, 303, callback.body)
        const token = await postSession(h, '/auth/token', session)
        assert.equal(token.statusCode, 200, token.body)
        assert.equal(Date.parse(token.json().expiresAt), signedInAt + lifetimeMs)
        assert.equal((await h.bearer(token.json().accessToken, { method: 'GET', url: '/api/sites' })).statusCode, 200)
      })
    }

    it('an access token without exp (whatever expires_in says) is refused at sign-in: 400 SignInFailed, no session', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'member')
      shared.accounts[h.accountKey('ada')]!.sub = 'pairwise-ada' // the ID token's subject too: only exp is missing
      const now = Math.floor(h.clock.now() / 1000)
      const endless = await h.op.signJwt({ iss: h.op.issuer, aud: AUDIENCE, sub: 'pairwise-ada', oid: h.oidOf('ada'), org_slug: h.org.slug, iat: now })
      replaceAccessToken = endless
      expiresIn = 3600
      t.after(() => {
        replaceAccessToken = undefined
        expiresIn = undefined
      })
      const { callback } = await signIn(h, 'ada')
      assert.equal(callback.statusCode, 400, callback.body)
      assert.equal(callback.json().code, 'SignInFailed')
      assert.equal((await h.handle.db.selectFrom('sessions').select('id').where('org_id', '=', h.org.id).execute()).length, 0)
    })

    it('a refresh answering expires_in 1e300 gives the renewed token the rest of the session, not more', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'member')
      const signedInAt = h.clock.now()
      const { session } = await signIn(h, 'ada')
      const first = (await postSession(h, '/auth/token', session)).json()
      expiresIn = 1e300
      t.after(() => {
        expiresIn = undefined
      })
      h.clock.set(Date.parse(first.expiresAt) - 30_000)
      const renewed = await postSession(h, '/auth/token', session)
      assert.equal(renewed.statusCode, 200, renewed.body)
      assert.notEqual(renewed.json().accessToken, first.accessToken)
      assert.equal(Date.parse(renewed.json().expiresAt), signedInAt + SESSION_TTL_MS)
    })
  })
}
