import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { decodeJwt } from 'jose'
import { testDialects } from '../../../test/harness.ts'
import { origin, postSession, setCookies, signIn, valueOf } from '../../../test/oidc/browser-flow.ts'
import { identityHarness, startSharedProvider, type SharedProvider } from '../../../test/oidc/identity-harness.ts'
import { LOGIN_COOKIE, SESSION_COOKIE } from './cookies.ts'

let shared: SharedProvider
before(async () => {
  shared = await startSharedProvider()
})
after(() => shared.stop())

for (const dialect of testDialects()) {
  describe(`${dialect}: browser sessions (spec 5 rule 6): sign-in`, () => {
    it('sign-in end to end: PKCE S256 login, callback sets a __Host- session cookie, /auth/token hands out a working access token', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'admin')
      const { login, callback, session } = await signIn(h, 'ada', { returnTo: '/sites/A?tab=alarms' })
      const authorize = new URL(login.headers.location as string)
      assert.equal(authorize.origin, h.op.issuer)
      assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256')
      assert.ok(authorize.searchParams.get('state') && authorize.searchParams.get('nonce') && authorize.searchParams.get('code_challenge'))
      assert.equal(authorize.searchParams.get('redirect_uri'), `${origin(h)}/auth/callback`)
      assert.match(setCookies(login).get(LOGIN_COOKIE)!, /; Max-Age=600; Path=\/; HttpOnly; Secure; SameSite=Lax/)
      assert.equal(callback.statusCode, 303, callback.body)
      assert.equal(callback.headers.location, '/sites/A?tab=alarms')
      const cookieLine = setCookies(callback).get(SESSION_COOKIE)!
      for (const attribute of ['Path=/', 'HttpOnly', 'Secure', 'SameSite=Lax']) assert.ok(cookieLine.includes(`; ${attribute}`), attribute)
      assert.ok(!/;\s*Domain=/i.test(cookieLine), '__Host- cookies carry no Domain')
      assert.match(setCookies(callback).get(LOGIN_COOKIE)!, /Max-Age=0/, 'the pending-login cookie is cleared')
      const token = await postSession(h, '/auth/token', session)
      assert.equal(token.statusCode, 200, token.body)
      assert.equal(token.headers['cache-control'], 'no-store')
      const { accessToken, tokenType } = token.json()
      assert.equal(tokenType, 'Bearer')
      assert.equal((await h.bearer(accessToken, { method: 'GET', url: '/api/admin/api-keys' })).statusCode, 200)
      const row = await h.handle.db.selectFrom('sessions').selectAll().where('org_id', '=', h.org.id).executeTakeFirstOrThrow()
      assert.equal(row.account_id, h.oidOf('ada'))
      assert.equal(row.sub, decodeJwt(accessToken).sub)
      assert.ok(!row.access_token.includes(accessToken.slice(0, 20)) && row.id !== session, 'tokens are sealed and the cookie is stored hashed')
    })

    it('the OpenAPI document describes the four sign-in endpoints and the token answer', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      const doc = (await h.inject(undefined, { method: 'GET', url: '/openapi.json' })).json()
      for (const [path, method] of [
        ['/auth/login', 'get'],
        ['/auth/callback', 'get'],
        ['/auth/token', 'post'],
        ['/auth/logout', 'post'],
      ] as const) {
        assert.ok(doc.paths[path]?.[method], `${method} ${path}`)
      }
      const { $ref } = doc.paths['/auth/token'].post.responses['200'].content['application/json'].schema
      const token = doc.components.schemas[$ref.slice('#/components/schemas/'.length)]
      assert.deepEqual(Object.keys(token.properties ?? {}).sort(), ['accessToken', 'expiresAt', 'tokenType'])
    })

    it('the first sign-in of an unknown account records a pending request with e-mail and name; the API answers 403 until approval', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      const { callback, session } = await signIn(h, 'newcomer')
      assert.equal(callback.statusCode, 303)
      const row = await h.handle.db.selectFrom('memberships').selectAll().where('org_id', '=', h.org.id).executeTakeFirstOrThrow()
      assert.deepEqual([row.account_id, row.status, row.email, row.name], [h.oidOf('newcomer'), 'pending', 'newcomer@example.test', 'User newcomer'])
      const { accessToken } = (await postSession(h, '/auth/token', session)).json()
      assert.equal((await h.bearer(accessToken, { method: 'GET', url: '/api/admin/api-keys' })).statusCode, 403)
    })

    it("a platform admin's browser sign-in records no membership request", async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.makePlatformAdmin('root')
      const { callback, session } = await signIn(h, 'root')
      assert.equal(callback.statusCode, 303)
      assert.equal((await h.handle.db.selectFrom('memberships').select('account_id').where('org_id', '=', h.org.id).execute()).length, 0)
      const { accessToken } = (await postSession(h, '/auth/token', session)).json()
      assert.equal((await h.bearer(accessToken, { method: 'GET', url: `/api/admin/orgs/${h.org.slug}/members` })).statusCode, 200)
    })

    it('every sign-in creates a new session id, and the session the browser had before is ended', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'member')
      const first = await signIn(h, 'ada')
      const second = await signIn(h, 'ada', { sessionCookie: first.session })
      assert.ok(first.session && second.session && first.session !== second.session)
      assert.equal((await postSession(h, '/auth/token', first.session)).statusCode, 401)
      assert.equal((await postSession(h, '/auth/token', second.session)).statusCode, 200)
    })

    it('a replayed callback, a callback without the login cookie, or with a tampered state is refused (400 SignInFailed), creating no session', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'member')
      const done = await signIn(h, 'ada')
      const replay = await h.inject(
        { org: h.org },
        { method: 'GET', url: `${done.callbackUrl.pathname}${done.callbackUrl.search}`, headers: { cookie: `${LOGIN_COOKIE}=${done.loginCookie}` } },
      )
      assert.equal(replay.statusCode, 400)
      assert.equal(replay.json().code, 'SignInFailed')
      const login = await h.inject({ org: h.org }, { method: 'GET', url: '/auth/login' })
      const callbackUrl = await h.op.authorize(login.headers.location as string, h.accountKey('ada'))
      const noCookie = await h.inject({ org: h.org }, { method: 'GET', url: `${callbackUrl.pathname}${callbackUrl.search}` })
      assert.equal(noCookie.statusCode, 400)
      callbackUrl.searchParams.set('state', 'forged-state')
      const forged = await h.inject(
        { org: h.org },
        {
          method: 'GET',
          url: `${callbackUrl.pathname}${callbackUrl.search}`,
          headers: { cookie: `${LOGIN_COOKIE}=${valueOf(setCookies(login).get(LOGIN_COOKIE))}` },
        },
      )
      assert.equal(forged.statusCode, 400)
      assert.equal(forged.json().code, 'SignInFailed')
      const sessions = await h.handle.db.selectFrom('sessions').select('id').where('org_id', '=', h.org.id).execute()
      assert.equal(sessions.length, 1, 'only the first, legitimate sign-in made a session')
    })

    it('a sign-in that does not finish within 10 minutes is refused', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      h.oidOf('ada')
      const login = await h.inject({ org: h.org }, { method: 'GET', url: '/auth/login' })
      const callbackUrl = await h.op.authorize(login.headers.location as string, h.accountKey('ada'))
      h.clock.advance(10 * 60_000 + 1)
      const late = await h.inject(
        { org: h.org },
        {
          method: 'GET',
          url: `${callbackUrl.pathname}${callbackUrl.search}`,
          headers: { cookie: `${LOGIN_COOKIE}=${valueOf(setCookies(login).get(LOGIN_COOKIE))}` },
        },
      )
      assert.equal(late.statusCode, 400)
    })

    it('returnTo must be a path on this host: another host, //host (also after dot segments) and schemes land on /', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'member')
      for (const returnTo of [
        'https://evil.example/',
        '//evil.example/x',
        '/\\evil.example',
        '/.//evil.example',
        '/%2e//evil.example',
        'javascript:alert(1)',
      ]) {
        const { callback } = await signIn(h, 'ada', { returnTo })
        assert.equal(callback.headers.location, '/', returnTo)
      }
    })
  })
}
