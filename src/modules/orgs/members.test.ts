import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CLI_ACTOR, type Org, type Principal } from '../../identity.ts'
import { satisfiesPolicy } from '../../http/auth.ts'
import type { OrgId } from '../../ids.ts'
import { harness, testDialects, type Harness } from '../../../test/harness.ts'
import { endSessionsOfAccount } from '../../auth/sessions/end-sessions.ts'
import { createMembersService } from './members-service.ts'

const CLOUD = { SITEGRID_MODE: 'cloud' }

async function seed(h: Harness, org: Org, members: Record<string, 'pending' | 'owner' | 'admin' | 'member'>) {
  const service = createMembersService({ handle: h.handle, clock: h.clock, endSessions: endSessionsOfAccount })
  for (const [oid, state] of Object.entries(members)) {
    await service.recordSignIn(org.id, { oid, email: `${oid}@example.test`, name: `Name ${oid}` })
    if (state !== 'pending') await service.approve(org.id, { actor: CLI_ACTOR, isPlatformAdmin: true }, oid, state)
  }
}

const membership = (h: Harness, org: Org, oid: string) =>
  h.handle.db.selectFrom('memberships').selectAll().where('org_id', '=', org.id).where('account_id', '=', oid).executeTakeFirst()
const audit = (h: Harness, org: Org) =>
  h.handle.db.selectFrom('audit_events').select(['action', 'target', 'actor_id']).where('org_id', '=', org.id).where('action', 'like', 'member.%').execute()

describe('organisation administration policy', () => {
  const base = { orgId: 'org_00000000' as OrgId, subject: 's', isPlatformAdmin: false }
  it('OrgAdmin refuses a site-PIN principal even with the site role owner', () => {
    assert.equal(satisfiesPolicy({ ...base, kind: 'sitePin', role: 'owner' }, 'orgAdmin'), false)
    assert.equal(satisfiesPolicy({ ...base, kind: 'user', role: 'admin' }, 'orgAdmin'), true)
    assert.equal(satisfiesPolicy({ ...base, kind: 'apiKey', role: 'member' }, 'orgAdmin'), false)
  })
  it('a pending principal fails every policy; a platform admin passes every one', () => {
    const pending: Principal = { ...base, kind: 'user', role: 'owner', isPending: true }
    for (const policy of ['member', 'admin', 'owner', 'orgAdmin', 'platformAdmin'] as const) {
      assert.equal(satisfiesPolicy(pending, policy), false, policy)
      assert.equal(satisfiesPolicy({ ...base, kind: 'user', role: 'member', isPlatformAdmin: true }, policy), true, policy)
    }
  })
})

for (const dialect of testDialects()) {
  describe(`${dialect}: members (spec 4.5)`, () => {
    it('lists pending requests and active members with e-mail and name, never revoked ones, in pages by accountId', async (t) => {
      const h = await harness(t, dialect, CLOUD)
      const { org, key } = await h.orgWithKey('admin')
      await seed(h, org, { 'oid-c': 'pending', 'oid-a': 'member', 'oid-b': 'admin', 'oid-d': 'pending' })
      await createMembersService({ handle: h.handle, clock: h.clock, endSessions: endSessionsOfAccount }).revoke(
        org.id,
        { actor: CLI_ACTOR, isPlatformAdmin: true },
        'oid-d',
      )
      const all = await h.inject({ org, apiKey: key }, { method: 'GET', url: `/api/admin/orgs/${org.slug}/members` })
      assert.equal(all.statusCode, 200, all.body)
      const items = all.json().items as Array<Record<string, unknown>>
      assert.deepEqual(
        items.map((m) => [m.accountId, m.status, m.role]),
        [
          ['oid-a', 'active', 'member'],
          ['oid-b', 'active', 'admin'],
          ['oid-c', 'pending', null],
        ],
      )
      assert.equal(items[2]!.email, 'oid-c@example.test')
      assert.equal(items[2]!.name, 'Name oid-c')
      const first = (await h.inject({ org, apiKey: key }, { method: 'GET', url: `/api/admin/orgs/${org.slug}/members?limit=2` })).json()
      assert.equal(first.items.length, 2)
      const second = (
        await h.inject({ org, apiKey: key }, { method: 'GET', url: `/api/admin/orgs/${org.slug}/members?limit=2&cursor=${first.nextCursor}` })
      ).json()
      assert.deepEqual(
        second.items.map((m: { accountId: string }) => m.accountId),
        ['oid-c'],
      )
      assert.equal(second.nextCursor, null)
      const pending = (await h.inject({ org, apiKey: key }, { method: 'GET', url: `/api/admin/orgs/${org.slug}/members?status=pending` })).json()
      assert.deepEqual(
        pending.items.map((m: { accountId: string }) => m.accountId),
        ['oid-c'],
      )
    })

    it('approve activates a pending request with role member by default and writes an audit row', async (t) => {
      const h = await harness(t, dialect, CLOUD)
      const { org, key, keyId } = await h.orgWithKey('admin')
      await seed(h, org, { 'oid-new': 'pending' })
      const res = await h.inject({ org, apiKey: key }, { method: 'POST', url: `/api/admin/orgs/${org.slug}/members/oid-new/approve` })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().status, 'active')
      assert.equal(res.json().role, 'member')
      assert.equal((await membership(h, org, 'oid-new'))?.decided_by, keyId)
      assert.ok((await audit(h, org)).some((a) => a.action === 'member.approved' && a.target === 'oid-new' && a.actor_id === keyId))
    })

    it("approve refuses a role above the caller's own (403) and changes nothing", async (t) => {
      const h = await harness(t, dialect, CLOUD)
      const { org, key } = await h.orgWithKey('admin')
      await seed(h, org, { 'oid-new': 'pending' })
      const res = await h.inject(
        { org, apiKey: key },
        { method: 'POST', url: `/api/admin/orgs/${org.slug}/members/oid-new/approve`, payload: { role: 'owner' } },
      )
      assert.equal(res.statusCode, 403)
      assert.equal((await membership(h, org, 'oid-new'))?.status, 'pending')
      assert.equal((await audit(h, org)).filter((a) => a.action === 'member.approved').length, 0)
      const asAdmin = await h.inject(
        { org, apiKey: key },
        { method: 'POST', url: `/api/admin/orgs/${org.slug}/members/oid-new/approve`, payload: { role: 'admin' } },
      )
      assert.equal(asAdmin.statusCode, 200, 'an admin may grant admin')
    })

    it('approve: an unknown account is the uniform 404, an active one 409, an unknown role 400', async (t) => {
      const h = await harness(t, dialect, CLOUD)
      const { org, key } = await h.orgWithKey('owner')
      await seed(h, org, { 'oid-a': 'member', 'oid-p': 'pending' })
      const url = (oid: string) => `/api/admin/orgs/${org.slug}/members/${oid}/approve`
      const missing = await h.inject({ org, apiKey: key }, { method: 'POST', url: url('oid-nobody') })
      assert.equal(missing.statusCode, 404)
      assert.equal(missing.json().code, 'NotFound')
      assert.equal((await h.inject({ org, apiKey: key }, { method: 'POST', url: url('oid-a') })).statusCode, 409)
      const bad = await h.inject({ org, apiKey: key }, { method: 'POST', url: url('oid-p'), payload: { role: 'platform_admin' } })
      assert.equal(bad.statusCode, 400)
      assert.equal((await membership(h, org, 'oid-p'))?.status, 'pending')
    })

    it("members refuse a member-role caller (403), and another organisation's slug is the uniform 404 for an org admin", async (t) => {
      const h = await harness(t, dialect, CLOUD)
      const { org, key } = await h.orgWithKey('owner')
      const memberKey = (await h.mintKey(org, 'member')).plaintext
      const other = await h.createOrg()
      await seed(h, other, { 'oid-x': 'pending' })
      assert.equal((await h.inject({ org, apiKey: memberKey }, { method: 'GET', url: `/api/admin/orgs/${org.slug}/members` })).statusCode, 403)
      for (const req of [
        { method: 'GET' as const, url: `/api/admin/orgs/${other.slug}/members` },
        { method: 'POST' as const, url: `/api/admin/orgs/${other.slug}/members/oid-x/approve` },
        { method: 'DELETE' as const, url: `/api/admin/orgs/${other.slug}/members/oid-x` },
        { method: 'GET' as const, url: '/api/admin/orgs/no-such-org/members' },
      ]) {
        const res = await h.inject({ org, apiKey: key }, req)
        assert.equal(res.statusCode, 404, `${req.method} ${req.url}`)
        assert.equal(res.json().code, 'NotFound')
      }
      assert.equal((await membership(h, other, 'oid-x'))?.status, 'pending', 'the other organisation is untouched')
    })

    it('revoke removes a member, ends its sessions in the same transaction and writes an audit row', async (t) => {
      const h = await harness(t, dialect, CLOUD)
      const { org, key } = await h.orgWithKey('owner')
      await seed(h, org, { 'oid-a': 'admin', 'oid-b': 'member' })
      const session = (oid: string, id: string) => ({
        org_id: org.id,
        id,
        account_id: oid,
        sub: `sub-${oid}`,
        access_token: 'sealed',
        access_expires_at: h.clock.now() + 60_000,
        refresh_token: null,
        created_at: h.clock.now(),
        expires_at: h.clock.now() + 3_600_000,
      })
      await h.handle.db
        .insertInto('sessions')
        .values([session('oid-a', 's1'), session('oid-a', 's2'), session('oid-b', 's3')])
        .execute()
      const res = await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/orgs/${org.slug}/members/oid-a` })
      assert.equal(res.statusCode, 204, res.body)
      assert.equal((await membership(h, org, 'oid-a'))?.status, 'revoked')
      const left = await h.handle.db.selectFrom('sessions').select('id').where('org_id', '=', org.id).execute()
      assert.deepEqual(
        left.map((s) => s.id),
        ['s3'],
      )
      assert.ok((await audit(h, org)).some((a) => a.action === 'member.revoked' && a.target === 'oid-a'))
      const again = await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/orgs/${org.slug}/members/oid-a` })
      assert.equal(again.statusCode, 404, 'an already revoked member is the uniform 404')
      const listed = (await h.inject({ org, apiKey: key }, { method: 'GET', url: `/api/admin/orgs/${org.slug}/members` })).json()
      assert.deepEqual(
        listed.items.map((m: { accountId: string }) => m.accountId),
        ['oid-b'],
      )
    })

    it('revoke refuses the last active owner (409) but allows removing an owner while another remains', async (t) => {
      const h = await harness(t, dialect, CLOUD)
      const { org, key } = await h.orgWithKey('owner')
      await seed(h, org, { 'oid-o1': 'owner', 'oid-o2': 'owner' })
      assert.equal((await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/orgs/${org.slug}/members/oid-o1` })).statusCode, 204)
      const last = await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/orgs/${org.slug}/members/oid-o2` })
      assert.equal(last.statusCode, 409)
      assert.equal(last.json().code, 'Conflict')
      assert.equal((await membership(h, org, 'oid-o2'))?.status, 'active')
    })

    it('a request approved 20 times at once is approved once, the others 409 as after it (never 404); approvals racing removals never 5xx', async (t) => {
      const h = await harness(t, dialect, { ...CLOUD, SITEGRID_RATE_LIMIT_PER_MINUTE: '100000000' })
      const { org, key } = await h.orgWithKey('owner')
      const approve = (oid: string) =>
        h.inject({ org, apiKey: key }, { method: 'POST', url: `/api/admin/orgs/${org.slug}/members/${oid}/approve`, payload: {} })
      const remove = (oid: string) => h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/orgs/${org.slug}/members/${oid}` })
      const answers = (all: Array<{ statusCode: number; json(): { code?: string } }>) =>
        all.map((r) => (r.statusCode < 300 ? String(r.statusCode) : `${r.statusCode} ${r.json().code}`)).sort()
      await seed(h, org, { 'oid-p': 'pending' })
      const approvals = answers(await Promise.all(Array.from({ length: 20 }, () => approve('oid-p'))))
      assert.deepEqual(approvals, ['200', ...Array<string>(19).fill('409 Conflict')])
      assert.equal((await audit(h, org)).filter((a) => a.action === 'member.approved' && a.target === 'oid-p').length, 1)
      // Before the fix, PostgreSQL: an approval held the membership row and waited for the organisation row the removal locked first (a deadlock, 503).
      for (let round = 0; round < 5; round++) {
        const oid = `oid-r${round}`
        await seed(h, org, { [oid]: 'pending' })
        const raced = answers(await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? remove(oid) : approve(oid)))))
        assert.equal(raced.filter((a) => a === '204').length, 1, raced.join())
        assert.ok(raced.filter((a) => a === '200').length <= 1, raced.join())
        assert.ok(
          raced.every((a) => ['200', '204', '404 NotFound', '409 Conflict'].includes(a)),
          raced.join(),
        )
        assert.equal((await membership(h, org, oid))?.status, 'revoked')
      }
    })

    it('an admin cannot remove an owner (403), and refusing a pending request is recorded as such', async (t) => {
      const h = await harness(t, dialect, CLOUD)
      const { org, key } = await h.orgWithKey('admin')
      await seed(h, org, { 'oid-o1': 'owner', 'oid-o2': 'owner', 'oid-p': 'pending' })
      assert.equal((await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/orgs/${org.slug}/members/oid-o1` })).statusCode, 403)
      assert.equal((await membership(h, org, 'oid-o1'))?.status, 'active')
      assert.equal((await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/orgs/${org.slug}/members/oid-p` })).statusCode, 204)
      assert.ok((await audit(h, org)).some((a) => a.action === 'member.request_refused' && a.target === 'oid-p'))
    })
  })
}
