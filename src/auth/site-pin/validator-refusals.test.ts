import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose'
import { comparableBody, harness, testDialects } from '../../../test/harness.ts'
import { CHEAP_PINS, addSiteUser, signedIn } from '../../../test/site/support.ts'
import { createSiteUsersService } from '../../modules/site-users/service.ts'
import { issueAccessToken } from './access-token.ts'
import { createSigningKeys } from './signing-keys.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: the local (-local) bearer validator`, () => {
    it('expired, tampered, foreign-organisation, wrong-key, wrong-issuer and alg-none tokens all get the uniform 401', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const other = await h.createOrg()
      const s = await signedIn(h, org, 'owner')
      const url = '/api/site/users'
      const reference = await h.inject(undefined, { url, host: `${org.slug}.localhost` })
      const [head, payload, signature] = s.accessToken.split('.') as [string, string, string]
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>
      const forge = (patch: Record<string, unknown>) => `${head}.${Buffer.from(JSON.stringify({ ...claims, ...patch })).toString('base64url')}.${signature}`
      const { privateKey } = await generateKeyPair('ES256')
      const strangerKey = await new SignJWT({ ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: decodeProtectedHeader(s.accessToken).kid!, typ: 'at+jwt' })
        .sign(privateKey)
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${payload}.`
      const cases: Record<string, Awaited<ReturnType<typeof h.inject>>> = {
        raisedRole: await h.inject({ org, bearer: forge({ site_role: 'owner', sub: 'su_other' }) }, { url }),
        otherOrgClaim: await h.inject({ org, bearer: forge({ org: other.id }) }, { url }),
        atOtherHost: await h.inject({ org: other, bearer: s.accessToken }, { url }),
        signedByStranger: await h.inject({ org, bearer: strangerKey }, { url }),
        algNone: await h.inject({ org, bearer: none }, { url }),
      }
      h.clock.advance(15 * 60_000 + 31_000)
      cases.expired = await h.inject({ org, bearer: s.accessToken }, { url })
      for (const [name, res] of Object.entries(cases)) {
        assert.equal(res.statusCode, 401, name)
        assert.deepEqual(comparableBody(res.body), comparableBody(reference.body), name)
      }
    })

    it('a token from an issuer not ending in -local is not given to the local validator', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const user = await addSiteUser(h, org, 'owner')
      const keys = createSigningKeys({ handle: h.handle, clock: h.clock, keySecret: h.config.keySecret! })
      const key = await keys.current(org.id)
      const token = await new SignJWT({ org: org.id, site_role: 'owner', ver: 1 })
        .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'at+jwt' })
        .setIssuer('sitegrid-site-cloud')
        .setAudience('sitegrid-site')
        .setSubject(user.id)
        .setIssuedAt(Math.floor(h.clock.now() / 1000))
        .setExpirationTime(Math.floor(h.clock.now() / 1000) + 600)
        .sign(key.key)
      assert.equal((await h.inject({ org, bearer: token }, { url: '/api/site/users' })).statusCode, 401)
    })

    it('on a cloud server a validly signed -local token gets the uniform 401, and the site endpoints do not exist', async (t) => {
      const h = await harness(t, dialect, { ...CHEAP_PINS, SITEGRID_MODE: 'cloud' })
      const org = await h.createOrg()
      const siteUsers = createSiteUsersService({ handle: h.handle, clock: h.clock })
      const owner = await addSiteUser(h, org, 'owner')
      const state = (await siteUsers.credentialState(org.id, owner.id))!
      const keys = createSigningKeys({ handle: h.handle, clock: h.clock, keySecret: h.config.keySecret! })
      const { token } = await issueAccessToken(await keys.current(org.id), org, state, h.clock.now())
      const res = await h.inject({ org, bearer: token }, { url: '/api/admin/api-keys' })
      assert.equal(res.statusCode, 401)
      assert.equal(res.json().code, 'Unauthorized')
      const signIn = await h.app.inject({
        method: 'POST',
        url: '/auth/site/login',
        headers: { host: `${org.slug}.localhost` },
        payload: { email: owner.email, pin: owner.pin },
      })
      assert.equal(signIn.statusCode, 404)
      assert.equal((await h.inject(undefined, { url: '/.well-known/jwks.json', host: `${org.slug}.localhost` })).statusCode, 404)
    })
  })
}
