import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { gunzipSync } from 'node:zlib'
import { describe, it } from 'node:test'
import { buildApp } from '../../../app.ts'
import { connectDatabase } from '../../../db/connect.ts'
import { satisfiesPolicy } from '../../../http/auth.ts'
import { createLogger } from '../../../http/logger.ts'
import type { Principal } from '../../../identity.ts'
import type { OrgId } from '../../../ids.ts'
import { comparableBody, comparableHeaders, harness, sleep, testDialects, type Harness } from '../../../../test/harness.ts'
import { LINK_PROTOCOL } from './protocol.ts'

type Cred = Parameters<Harness['inject']>[0]

async function cloudOrg(t: Parameters<typeof harness>[0], dialect: Parameters<typeof harness>[1], env: Record<string, string> = {}) {
  const h = await harness(t, dialect, { SITEGRID_MODE: 'cloud', ...env })
  const { org, key } = await h.orgWithKey('owner')
  const owner = { org, apiKey: key }
  for (const code of ['S1', 'S2', 'S3']) {
    assert.equal((await h.inject(owner, { method: 'POST', url: '/api/sites', payload: { code, name: `Plant ${code}` } })).statusCode, 201)
  }
  return { h, org, owner }
}

const registerAs = (h: Harness, who: Cred, sites: string[], name = 'Pit server') =>
  h.inject(who, { method: 'POST', url: '/api/admin/site-servers', payload: { name, sites } })

async function enrolDirect(h: Harness, slug: string, code: string) {
  const res = await h.inject(undefined, {
    method: 'POST',
    url: '/api/link/enrol',
    host: `${slug}.localhost`,
    payload: { code, orgId: null, protocol: LINK_PROTOCOL, schema: 'x' },
  })
  assert.equal(res.statusCode, 200, res.body)
  return res.json().credential as string
}

const seedAs = (h: Harness, who: Cred, site = 'S1', headers: Record<string, string> = { 'sitegrid-link-protocol': String(LINK_PROTOCOL) }) =>
  h.inject(who, { method: 'GET', url: `/api/link/seed?site=${site}`, headers })

describe('the link policy', () => {
  const base: Principal = { orgId: 'org_00000000' as OrgId, kind: 'apiKey', role: 'owner', subject: 'k', isPlatformAdmin: false }
  it('admits a link principal only, and a link principal passes no other policy (a platform admin neither)', () => {
    const link: Principal = { ...base, kind: 'link', role: 'member', subject: 'srv_x', sites: ['S1'] }
    assert.equal(satisfiesPolicy(link, 'link'), true)
    for (const policy of ['member', 'admin', 'owner', 'orgAdmin', 'platformAdmin'] as const) assert.equal(satisfiesPolicy(link, policy), false, policy)
    assert.equal(satisfiesPolicy(base, 'link'), false)
    assert.equal(satisfiesPolicy({ ...base, kind: 'user', isPlatformAdmin: true }, 'link'), false)
  })
})

for (const dialect of testDialects()) {
  describe(`${dialect}: site servers (cloud administration) and the link credential`, () => {
    it('registering answers the one-time code once (24 h); the list and the read never show a code or a verifier, and page', async (t) => {
      const { h, owner } = await cloudOrg(t, dialect)
      const res = await registerAs(h, owner, ['S1', 'S2'])
      assert.equal(res.statusCode, 201)
      const body = res.json()
      assert.deepEqual(Object.keys(body).sort(), ['codeExpiresAt', 'enrolmentCode', 'id', 'name', 'sites', 'status'])
      assert.match(body.id, /^srv_[0-9A-Z]{26}$/)
      assert.match(body.enrolmentCode, /^sle_[0-9A-Za-z]{32}$/)
      assert.equal(body.status, 'registered')
      assert.equal(Date.parse(body.codeExpiresAt), h.clock.now() + 24 * 3_600_000)
      assert.equal(res.headers['cache-control'], 'no-store')
      const row = await h.handle.db.selectFrom('site_servers').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow()
      assert.notEqual(row.code_hash, body.enrolmentCode, 'stored as a hash')
      assert.match(row.code_hash!, /^[0-9a-f]{64}$/)
      h.clock.advance(1) // ids are time-ordered: the second registration sorts after the first
      assert.equal((await registerAs(h, owner, ['S3'], 'Second')).statusCode, 201)

      const first = await h.inject(owner, { method: 'GET', url: '/api/admin/site-servers?limit=1' })
      assert.equal(first.statusCode, 200)
      assert.equal(first.json().items.length, 1)
      assert.equal(first.json().items[0].id, body.id)
      const second = await h.inject(owner, { method: 'GET', url: `/api/admin/site-servers?limit=1&cursor=${first.json().nextCursor}` })
      assert.deepEqual([second.json().items[0].name, second.json().nextCursor], ['Second', null])
      const read = await h.inject(owner, { method: 'GET', url: `/api/admin/site-servers/${body.id}` })
      for (const text of [first.body, second.body, read.body]) {
        assert.ok(!text.includes(body.enrolmentCode) && !text.includes(row.code_hash!) && !/enrolmentCode|verifier|code_hash/.test(text))
      }
      assert.deepEqual(
        [read.json().status, read.json().sites, read.json().codeExpiresAt, read.json().lastContactAt, read.json().backlog],
        ['registered', ['S1', 'S2'], body.codeExpiresAt, null, null],
      )
      const audit = await h.handle.db.selectFrom('audit_events').select(['action', 'actor_kind']).where('target', '=', body.id).execute()
      assert.deepEqual(audit, [{ action: 'site_server.registered', actor_kind: 'apiKey' }])
    })

    it('two registrations of one site at once: one 201, one 409', async (t) => {
      const { h, owner } = await cloudOrg(t, dialect)
      const statuses = (await Promise.all([registerAs(h, owner, ['S1', 'S2']), registerAs(h, owner, ['S2', 'S3'])])).map((r) => r.statusCode).sort()
      assert.deepEqual(statuses, [201, 409])
    })

    it('every site must exist: an unknown one is a 400 naming it, and nothing is stored', async (t) => {
      const { h, owner } = await cloudOrg(t, dialect)
      const res = await registerAs(h, owner, ['S1', 'NOPE'])
      assert.equal(res.statusCode, 400)
      assert.equal(res.json().code, 'ValidationFailed')
      assert.deepEqual(res.json().errors[0].pointer, '/sites/1')
      assert.equal((await h.handle.db.selectFrom('site_servers').selectAll().where('org_id', '=', owner.org.id).execute()).length, 0)
    })

    it('a site linked to another live site server is a 409 naming it; once that one is revoked the site can be given to another, and the revoked one then gets no new code', async (t) => {
      const { h, owner } = await cloudOrg(t, dialect)
      const first = (await registerAs(h, owner, ['S1', 'S2'])).json()
      const clash = await registerAs(h, owner, ['S3', 'S2'])
      assert.equal(clash.statusCode, 409)
      assert.equal(clash.json().code, 'Conflict')
      assert.deepEqual([clash.json().site, clash.json().serverId], ['S2', first.id])
      assert.equal((await h.inject(owner, { method: 'POST', url: `/api/admin/site-servers/${first.id}/revoke` })).statusCode, 200)
      assert.equal((await registerAs(h, owner, ['S3', 'S2'])).statusCode, 201)
      const reopen = await h.inject(owner, { method: 'POST', url: `/api/admin/site-servers/${first.id}/enrolment-code` })
      assert.equal(reopen.statusCode, 409)
      assert.equal(reopen.json().site, 'S2')
      // Revoking twice, or an unknown id: the uniform 404.
      assert.equal((await h.inject(owner, { method: 'POST', url: `/api/admin/site-servers/${first.id}/revoke` })).statusCode, 404)
      assert.equal((await h.inject(owner, { method: 'POST', url: '/api/admin/site-servers/srv_NOPE/revoke' })).statusCode, 404)
    })

    it("the administration refuses members and admins' keys of too low a role (403), and another organisation's server reads as the uniform 404", async (t) => {
      const { h, org, owner } = await cloudOrg(t, dialect)
      const server = (await registerAs(h, owner, ['S1'])).json()
      const member = { org, apiKey: (await h.mintKey(org, 'member')).plaintext }
      for (const [method, url] of [
        ['POST', '/api/admin/site-servers'],
        ['GET', '/api/admin/site-servers'],
        ['GET', `/api/admin/site-servers/${server.id}`],
        ['POST', `/api/admin/site-servers/${server.id}/revoke`],
        ['POST', `/api/admin/site-servers/${server.id}/enrolment-code`],
      ] as const) {
        const res = await h.inject(member, { method, url, ...(method === 'POST' && url.endsWith('servers') ? { payload: { name: 'x', sites: ['S2'] } } : {}) })
        assert.equal(res.statusCode, 403, `${method} ${url}`)
      }
      const admin = { org, apiKey: (await h.mintKey(org, 'admin')).plaintext }
      assert.equal((await h.inject(admin, { method: 'GET', url: '/api/admin/site-servers' })).statusCode, 200)
      const stranger = await h.orgWithKey('owner')
      const foreign = { org: stranger.org, apiKey: stranger.key }
      for (const url of [
        `/api/admin/site-servers/${server.id}`,
        `/api/admin/site-servers/${server.id}/revoke`,
        `/api/admin/site-servers/${server.id}/enrolment-code`,
      ]) {
        const res = await h.inject(foreign, { method: url.endsWith(server.id) ? 'GET' : 'POST', url })
        assert.equal(res.statusCode, 404, url)
      }
      assert.deepEqual((await h.inject(foreign, { method: 'GET', url: '/api/admin/site-servers' })).json().items, [])
      assert.equal((await h.inject(owner, { method: 'GET', url: `/api/admin/site-servers/${server.id}` })).json().status, 'registered', 'untouched')
    })

    it('a site server has neither the administration nor the cloud link routes (404)', async (t) => {
      const h = await harness(t, dialect, { SITEGRID_MODE: 'site' })
      const { org, key } = await h.orgWithKey('owner')
      const res = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/admin/site-servers', payload: { name: 'x', sites: ['S1'] } })
      assert.equal(res.statusCode, 404)
      assert.equal((await h.inject({ org, apiKey: key }, { method: 'GET', url: '/api/admin/site-servers' })).statusCode, 404)
      const enrol = await h.inject(undefined, {
        method: 'POST',
        url: '/api/link/enrol',
        host: `${org.slug}.localhost`,
        payload: { code: 'x', orgId: null, protocol: LINK_PROTOCOL, schema: 'x' },
      })
      assert.equal(enrol.statusCode, 404)
    })

    it('a link credential gets 403 on every other route, and an API key (even an owner) 403 on a link route', async (t) => {
      const { h, org, owner } = await cloudOrg(t, dialect)
      const server = (await registerAs(h, owner, ['S1'])).json()
      const link = { org, bearer: await enrolDirect(h, org.slug, server.enrolmentCode) }
      for (const [method, url] of [
        ['GET', '/api/sites'],
        ['GET', '/api/sites/S1'],
        ['GET', '/api/sites/S1/controllers'],
        ['GET', '/api/admin/site-servers'],
        ['GET', '/api/admin/api-keys'],
        ['GET', '/api/me'],
        ['GET', `/api/admin/orgs/${org.slug}/tenant/export`],
      ] as const) {
        const res = await h.inject(link, { method, url })
        assert.equal(res.statusCode, 403, `${method} ${url}: ${res.body}`)
        assert.equal(res.json().code, 'Forbidden')
      }
      assert.equal((await seedAs(h, link)).statusCode, 200)
      // Neither secret is ever logged.
      assert.ok(!h.rawLogs().includes(server.enrolmentCode) && !h.rawLogs().includes(link.bearer.slice(-32)))
      const asKey = await seedAs(h, owner)
      assert.equal(asKey.statusCode, 403)
      assert.equal(asKey.json().code, 'Forbidden')
    })

    it("seeding: the answer is the site's tenant package with the outbox position; another site is the uniform 404; no protocol header is a 409", async (t) => {
      const { h, org, owner } = await cloudOrg(t, dialect)
      const server = (await registerAs(h, owner, ['S1'])).json()
      const link = { org, bearer: await enrolDirect(h, org.slug, server.enrolmentCode) }
      // A command forwarded to S1 and still pending: the package has no commands, so the seed records it again after its cursor.
      await h.handle.db
        .insertInto('link_commands')
        .values({
          org_id: org.id,
          id: 'cmd_1',
          site_code: 'S1',
          alarm_id: 'alm_1',
          action: 'acknowledge',
          body: '{}',
          actor: '{}',
          created_at: 1,
          status: 'pending',
          result: null,
          settled_at: null,
        })
        .execute()
      const res = await seedAs(h, link)
      assert.equal(res.statusCode, 200)
      const [, seq] = String(res.headers['sitegrid-link-cursor']).split('.').map(Number)
      const recorded = await h.handle.db
        .selectFrom('link_outbox')
        .select('seq')
        .where('org_id', '=', org.id)
        .where('table_name', '=', 'link_commands')
        .orderBy('seq')
        .execute()
      assert.equal(recorded.length, 2, 'its creation, then the seed recorded it again')
      assert.ok(Number(recorded[1]!.seq) > seq!, 'after the cursor: the pull brings it')
      assert.equal(res.headers['content-type'], 'application/gzip')
      assert.match(String(res.headers['sitegrid-link-cursor']), /^\d+\.\d+$/)
      assert.equal(res.headers['sitegrid-link-protocol'], String(LINK_PROTOCOL))
      const lines = gunzipSync(res.rawPayload)
        .toString('utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
      assert.deepEqual([lines[0].type, lines[0].site, lines[0].org.id], ['header', 'S1', org.id])
      const siteRows = lines.filter((l) => l.type === 'row' && l.part === 'sites')
      assert.deepEqual(
        siteRows.map((l) => l.row.code),
        ['S1'],
      )
      for (const site of ['S2', 'S3', 'NOPE']) {
        const other = await seedAs(h, link, site)
        assert.equal(other.statusCode, 404, site)
        assert.equal(other.json().code, 'NotFound')
      }
      const bare = await seedAs(h, link, 'S1', {})
      assert.equal(bare.statusCode, 409)
      assert.equal(bare.json().code, 'LinkVersionMismatch')
    })

    it("a link credential at another organisation's host is the uniform 401", async (t) => {
      const { h, org, owner } = await cloudOrg(t, dialect)
      const server = (await registerAs(h, owner, ['S1'])).json()
      const credential = await enrolDirect(h, org.slug, server.enrolmentCode)
      const stranger = await h.orgWithKey('owner')
      const res = await seedAs(h, { org: stranger.org, bearer: credential })
      assert.equal(res.statusCode, 401)
      assert.equal(res.json().code, 'Unauthorized')
      // A used code at the right host: 401; the code of one organisation at another's host: 401 too.
      const again = (await registerAs(h, owner, ['S2'])).json()
      const elsewhere = await h.inject(undefined, {
        method: 'POST',
        url: '/api/link/enrol',
        host: `${stranger.org.slug}.localhost`,
        payload: { code: again.enrolmentCode, orgId: null, protocol: LINK_PROTOCOL, schema: 'x' },
      })
      assert.equal(elsewhere.statusCode, 401)
    })

    it('a re-enrolment replaces the credential: the previous one gets the uniform 401 at once, the new one works', async (t) => {
      const { h, org, owner } = await cloudOrg(t, dialect)
      const server = (await registerAs(h, owner, ['S1'])).json()
      const old = await enrolDirect(h, org.slug, server.enrolmentCode)
      assert.equal((await seedAs(h, { org, bearer: old })).statusCode, 200, 'verified and cached')
      const code = (await h.inject(owner, { method: 'POST', url: `/api/admin/site-servers/${server.id}/enrolment-code` })).json().enrolmentCode
      assert.equal((await seedAs(h, { org, bearer: old })).statusCode, 200, 'a pending code leaves the credential working')
      const renewed = await enrolDirect(h, org.slug, code)
      assert.equal((await seedAs(h, { org, bearer: old })).statusCode, 401)
      assert.equal((await seedAs(h, { org, bearer: renewed })).statusCode, 200)
    })

    it('a revoke stops the credential at once in another process sharing the database, with the 401 of an unknown credential', async (t) => {
      const { h, org, owner } = await cloudOrg(t, dialect)
      const server = (await registerAs(h, owner, ['S1'])).json()
      const credential = await enrolDirect(h, org.slug, server.enrolmentCode)
      // A second process of the cell: its own connection and caches.
      const other = await connectDatabase(h.config.databaseAppUrl ?? h.config.databaseUrl, { poolSize: 2 })
      const sink = new Writable({ write: (_c, _e, cb) => cb() })
      const second = await buildApp({ config: h.config, handle: other, clock: h.clock, log: createLogger('silent', sink) })
      t.after(async () => {
        await second.close()
        await other.close()
      })
      const seedThere = (bearer: string) =>
        second.inject({
          method: 'GET',
          url: '/api/link/seed?site=S1',
          headers: { host: `${org.slug}.localhost`, authorization: `Bearer ${bearer}`, 'sitegrid-link-protocol': String(LINK_PROTOCOL) },
        })
      assert.equal((await seedThere(credential)).statusCode, 200, 'verified and cached there')
      assert.equal((await h.inject(owner, { method: 'POST', url: `/api/admin/site-servers/${server.id}/revoke` })).statusCode, 200)
      // PostgreSQL carries the signal by NOTIFY: it arrives once the revoke commits; bounded wait, no timing asserted.
      let revoked = await seedThere(credential)
      for (let i = 0; revoked.statusCode !== 401 && i < 100; i++) {
        await sleep(50)
        revoked = await seedThere(credential)
      }
      const unknown = await seedThere(`slk_${server.id}_${'A'.repeat(32)}`)
      assert.equal(revoked.statusCode, 401)
      assert.deepEqual(comparableBody(revoked.body), comparableBody(unknown.body))
      assert.deepEqual(comparableHeaders(revoked.headers), comparableHeaders(unknown.headers))
    })

    it('enrolment is limited per client address like the sign-in endpoints (429 with Retry-After)', async (t) => {
      const { h, org } = await cloudOrg(t, dialect, { SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE: '3' })
      const statuses: number[] = []
      let last
      for (let i = 0; i < 4; i++) {
        last = await h.inject(undefined, {
          method: 'POST',
          url: '/api/link/enrol',
          host: `${org.slug}.localhost`,
          payload: { code: `sle_${'0'.repeat(32)}`, orgId: null, protocol: LINK_PROTOCOL, schema: 'x' },
        })
        statuses.push(last.statusCode)
      }
      assert.deepEqual(statuses, [401, 401, 401, 429])
      assert.equal(last!.json().code, 'RateLimited')
      assert.ok(Number(last!.headers['retry-after']) > 0)
    })
  })
}
