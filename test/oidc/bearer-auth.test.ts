import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { decodeJwt } from 'jose'
import type { JWTPayload } from 'jose'
import { createOidcBearerValidator } from '../../src/auth/oidc/bearer.ts'
import { createOidcKeySet } from '../../src/auth/oidc/key-set.ts'
import { CLI_ACTOR } from '../../src/identity.ts'
import { createOidcPrincipalValidator } from '../../src/auth/oidc/principal-validator.ts'
import { endSessionsOfAccount } from '../../src/auth/sessions/end-sessions.ts'
import { createMembersService } from '../../src/modules/orgs/members-service.ts'
import { createPlatformAdminsService } from '../../src/modules/orgs/platform-admins-service.ts'
import { comparableBody, testDialects } from '../harness.ts'
import { AUDIENCE, identityHarness, startSharedProvider, type IdentityHarness, type SharedProvider } from './identity-harness.ts'

const KEYS_URL = '/api/admin/api-keys'
const nowSec = () => Math.floor(Date.now() / 1000)

function claimsFor(h: IdentityHarness, accountId: string, extra: JWTPayload = {}): JWTPayload {
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

let shared: SharedProvider
before(async () => {
  shared = await startSharedProvider()
})
after(() => shared.stop())

for (const dialect of testDialects()) {
  describe(`${dialect}: OIDC bearer tokens (spec 5 rule 5)`, () => {
    it("an active member's provider token authenticates with the role from the membership table", async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'admin')
      await h.activate('mo', 'member')
      assert.equal((await h.bearer(await h.token('ada'), { method: 'GET', url: KEYS_URL })).statusCode, 200)
      const member = await h.bearer(await h.token('mo'), { method: 'GET', url: KEYS_URL })
      assert.equal(member.statusCode, 403)
      assert.equal(member.json().code, 'Forbidden')
    })

    it('a remembered token of a cached member is answered without a promise (issue 29), and a revocation still takes effect at once', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'admin')
      const members = createMembersService({ handle: h.handle, clock: h.clock, endSessions: endSessionsOfAccount })
      const clock = () => new Date()
      const keySet = createOidcKeySet({ jwksUri: h.op.jwksUri, clock })
      await keySet.load() // as the relying party does at start-up
      const validator = createOidcPrincipalValidator({
        relyingParty: {
          metadata: { issuer: h.op.issuer } as never,
          validateBearer: createOidcBearerValidator({
            issuer: h.op.issuer,
            audience: AUDIENCE,
            keySet,
            clockToleranceSec: 30,
            clock,
          }),
        },
        members,
        platformAdmins: createPlatformAdminsService({ handle: h.handle, clock: h.clock }),
        handle: h.handle,
        log: h.app.log,
      })
      const token = await h.token('ada')
      assert.equal(validator.remembered?.(token, h.org), undefined, 'a token never verified is not remembered')
      const first = validator.validate(token, h.org)
      assert.ok(first instanceof Promise, 'the first call verifies the signature and looks the membership up')
      assert.equal((await first)?.role, 'admin')
      const again = validator.validate(token, h.org)
      assert.ok(!(again instanceof Promise), 'remembered token, cached access: answered at once')
      assert.equal(again?.role, 'admin')
      // The selector's shortcut (no issuer peek): the same principal, for this organisation's host only.
      assert.equal(validator.remembered?.(token, h.org), again)
      assert.equal(validator.remembered?.(token, { ...h.org, id: 'another-org' as never, slug: 'another' }), undefined)
      const [header, payload, signature] = token.split('.')
      assert.equal(validator.remembered?.(`${header}.${payload}.${signature!.slice(0, -4)}AAAA`, h.org), undefined, 'a forged copy is not remembered')
      await members.revoke(h.org.id, { actor: CLI_ACTOR, isPlatformAdmin: true }, h.oidOf('ada'))
      assert.equal(validator.remembered?.(token, h.org), undefined, 'the invalidation generation moved: the cached access is gone')
      const revoked = await validator.validate(token, h.org)
      assert.equal(revoked?.isPending, true, 'the invalidation generation moved: looked up again, refused by every policy')
    })

    it('a role claim in the token is ignored: a member with a validly signed "owner" claim is still a member', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('mo', 'member')
      const token = await h.op.signJwt(claimsFor(h, 'mo', { role: 'owner', roles: ['owner', 'admin'] }))
      assert.equal((await h.bearer(token, { method: 'GET', url: KEYS_URL })).statusCode, 403)
      const control = await h.op.signJwt(claimsFor(h, 'mo'))
      assert.equal((await h.bearer(control, { method: 'GET', url: `/api/admin/orgs/${h.org.slug}/members` })).statusCode, 403)
    })

    it('the first bearer call of an unknown oid records one pending membership request and answers 403 until approved', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      const token = await h.token('newcomer')
      for (let i = 0; i < 2; i++) {
        const res = await h.bearer(token, { method: 'GET', url: KEYS_URL })
        assert.equal(res.statusCode, 403)
        assert.equal(res.json().code, 'Forbidden')
      }
      const rows = await h.handle.db.selectFrom('memberships').selectAll().where('org_id', '=', h.org.id).execute()
      assert.deepEqual(
        rows.map((r) => [r.account_id, r.status, r.role]),
        [[h.oidOf('newcomer'), 'pending', null]],
      )
      await h.activate('ada', 'owner')
      const approve = await h.bearer(await h.token('ada'), {
        method: 'POST',
        url: `/api/admin/orgs/${h.org.slug}/members/${h.oidOf('newcomer')}/approve`,
        payload: { role: 'admin' },
      })
      assert.equal(approve.statusCode, 200, approve.body)
      assert.equal((await h.bearer(token, { method: 'GET', url: KEYS_URL })).statusCode, 200, 'the same token works at once after approval')
    })

    it('a token whose org_slug names another organisation is the uniform 401, even for an active member and a platform admin', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      const other = await h.createOrg()
      await h.activate('ada', 'owner')
      await h.activate('ada', 'owner', other)
      await h.makePlatformAdmin('ada')
      const token = await h.token('ada')
      assert.equal((await h.bearer(token, { method: 'GET', url: KEYS_URL })).statusCode, 200)
      const res = await h.bearer(token, { method: 'GET', url: KEYS_URL, org: other })
      assert.equal(res.statusCode, 401)
      const reference = await h.inject({ org: other, apiKey: `csk_${'x'.repeat(32)}` }, { method: 'GET', url: KEYS_URL })
      assert.deepEqual(comparableBody(res.body), comparableBody(reference.body))
    })

    it('a key minted by a bearer session records the token sub (pairwise, not the oid) as createdByUserId', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'owner')
      const token = await h.token('ada')
      const minted = await h.bearer(token, {
        method: 'POST',
        url: KEYS_URL,
        payload: { role: 'member', name: 'gateway', expiresAt: new Date(h.clock.now() + 86_400_000 * 10).toISOString() },
      })
      assert.equal(minted.statusCode, 201, minted.body)
      const listed = (await h.bearer(token, { method: 'GET', url: KEYS_URL })).json() as Array<{ keyId: string; createdByUserId: string }>
      const created = listed.find((k) => k.keyId === minted.json().keyId)
      assert.equal(created?.createdByUserId, decodeJwt(token).sub)
      assert.notEqual(created?.createdByUserId, h.oidOf('ada'))
      // The membership key is kept beside it, for the expiry reminder's recipient (issue 12).
      const row = await h.handle.db.selectFrom('api_keys').select('created_by_account').where('id', '=', minted.json().keyId).executeTakeFirstOrThrow()
      assert.equal(row.created_by_account, h.oidOf('ada'))
    })

    it("a revoked member's still-valid token is refused (403) at once, and no new request is recorded", async (t) => {
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'owner')
      await h.activate('mo', 'admin')
      const token = await h.token('mo')
      assert.equal((await h.bearer(token, { method: 'GET', url: KEYS_URL })).statusCode, 200)
      const revoke = await h.bearer(await h.token('ada'), { method: 'DELETE', url: `/api/admin/orgs/${h.org.slug}/members/${h.oidOf('mo')}` })
      assert.equal(revoke.statusCode, 204, revoke.body)
      assert.equal((await h.bearer(token, { method: 'GET', url: KEYS_URL })).statusCode, 403)
      const row = await h.handle.db
        .selectFrom('memberships')
        .select('status')
        .where('org_id', '=', h.org.id)
        .where('account_id', '=', h.oidOf('mo'))
        .executeTakeFirst()
      assert.equal(row?.status, 'revoked')
    })

    it('removing a platform admin takes effect at once for a token already in use', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      const other = await h.createOrg()
      await h.makePlatformAdmin('root')
      const root = await h.token('root')
      assert.equal((await h.bearer(root, { method: 'GET', url: `/api/admin/orgs/${other.slug}/members` })).statusCode, 200)
      await createPlatformAdminsService({ handle: h.handle, clock: h.clock }).remove(h.oidOf('root'))
      assert.equal((await h.bearer(root, { method: 'GET', url: `/api/admin/orgs/${other.slug}/members` })).statusCode, 403)
    })

    it("a platform admin passes OrgAdmin at its host without a membership and may name another organisation's slug", async (t) => {
      const h = await identityHarness(t, dialect, shared)
      const other = await h.createOrg()
      await h.makePlatformAdmin('root')
      await h.activate('ada', 'admin')
      const root = await h.token('root')
      const own = await h.bearer(root, { method: 'GET', url: `/api/admin/orgs/${h.org.slug}/members` })
      assert.equal(own.statusCode, 200, own.body)
      assert.ok(!(own.json().items as Array<{ accountId: string }>).some((m) => m.accountId === h.oidOf('root')), 'no membership request for a platform admin')
      assert.equal((await h.bearer(root, { method: 'GET', url: `/api/admin/orgs/${other.slug}/members` })).statusCode, 200)
      const admin = await h.bearer(await h.token('ada'), { method: 'GET', url: `/api/admin/orgs/${other.slug}/members` })
      assert.equal(admin.statusCode, 404, 'an org admin naming another organisation gets the uniform 404')
      assert.equal((await h.bearer(root, { method: 'GET', url: '/api/admin/orgs/no-such-org/members' })).statusCode, 404)
    })
  })
}
