import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import { describe, it } from 'node:test'
import { comparableBody, comparableHeaders, testDialects } from '../../../../test/harness.ts'
import { CLI_ACTOR } from '../../../identity.ts'
import { cloudCell, register, siteServer } from './test-link.ts'
import { LINK_PROTOCOL } from '../site-servers/protocol.ts'

const DAY_MS = 86_400_000

/** A raw POST over loopback (no client-side pooling or queueing), for the concurrent enrolments. */
function postJson(port: number, host: string, path: string, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers: { host, 'content-type': 'application/json' } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => {
        text += c
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
    })
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect} cloud, sqlite site: enrolment and seeding over loopback`, () => {
    it('register, enrol: the site is seeded and reads its sites, controllers and instances as the cloud does; revoke: the uniform 401; a new code re-enrols with the same id and epoch', async (t) => {
      const cell = await cloudCell(t, dialect)
      const { site, orgs, enrolment } = await siteServer(t)
      const registered = await register(cell.cloud, cell.owner)

      const result = await enrolment.enrol({ cloudUrl: cell.url, code: registered.code, http: cell.http, actor: CLI_ACTOR })
      assert.equal(result.serverId, registered.id)
      assert.deepEqual(result.org, { id: cell.org.id, slug: cell.org.slug, name: cell.org.name })
      assert.deepEqual(result.seeded, ['S1', 'S2'])
      assert.equal(result.isReenrolment, false)
      assert.match(result.epoch, /^[0-9a-f]{32}$/)

      // The organisation was created here with the cloud's id, slug and name.
      const local = await orgs.findBySlug(cell.org.slug)
      assert.deepEqual(local && { id: local.id, slug: local.slug, name: local.name }, result.org)
      const siteKey = await site.mintKey(local!, 'owner')
      const onSite = { org: local!, apiKey: siteKey.plaintext }
      for (const url of ['/api/sites/S1', '/api/sites/S2', '/api/sites/S1/controllers', '/api/sites/S1/instances', '/api/sites/S2/instances']) {
        const [there, here] = [await cell.as('GET', url), await site.inject(onSite, { method: 'GET', url })]
        assert.equal(there.statusCode, 200, there.body)
        assert.equal(here.statusCode, 200, here.body)
        assert.deepEqual(here.json(), there.json(), url)
      }
      assert.equal((await site.inject(onSite, { method: 'GET', url: '/api/sites/S1/instances' })).json().items.length, 2)

      // The credential is stored sealed (never in clear), bound to the organisation and the server id.
      const peer = await site.handle.db.selectFrom('link_peer').selectAll().where('org_id', '=', local!.id).executeTakeFirstOrThrow()
      assert.equal(peer.server_id, registered.id)
      assert.equal(peer.cloud_url, cell.url)
      assert.equal(peer.epoch, result.epoch)
      const credential = await enrolment.credential(local!.id)
      assert.match(credential ?? '', /^slk_srv_/)
      assert.ok(!peer.sealed_credential!.includes(credential!.slice(4)), 'sealed, not in clear')
      const mark = await site.handle.db
        .selectFrom('link_marks')
        .selectAll()
        .where('org_id', '=', local!.id)
        .where('peer', '=', 'cloud')
        .executeTakeFirstOrThrow()
      assert.deepEqual({ tx: mark.tx, seq: mark.seq, epoch: mark.epoch }, { ...result.mark, epoch: result.epoch })
      // Each seeded row of a cloud-authoritative table has its base version (the seed's position).
      const bases = await site.handle.db.selectFrom('link_base').select(['table_name', 'row_key']).where('org_id', '=', local!.id).execute()
      assert.equal(bases.filter((b) => b.table_name === 'sites').length, 2)
      assert.equal(bases.filter((b) => b.table_name === 'instances').length, 4)
      assert.ok(bases.some((b) => b.table_name === 'instances' && b.row_key === JSON.stringify(['S1', 'CV-1'])))
      // The pull starts where the first seed's export began: on SQLite the cloud's newest change then (nothing was written
      // since); on PostgreSQL at most that (its cursor stops before any transaction still running in the cluster).
      const newest = await cell.cloud.handle.db
        .selectFrom('link_outbox')
        .select((eb) => eb.fn.max('seq').as('seq'))
        .where('org_id', '=', cell.org.id)
        .executeTakeFirstOrThrow()
      if (dialect === 'sqlite') assert.deepEqual(result.mark, { tx: 0, seq: Number(newest.seq) })
      else assert.ok(result.mark.seq <= Number(newest.seq))
      const versions = await site.handle.db
        .selectFrom('link_base')
        .select('version')
        .distinct()
        .where('org_id', '=', local!.id)
        .where('row_key', 'like', '["S1"%')
        .execute()
      assert.deepEqual(
        versions.map((v) => v.version),
        [result.mark.seq],
      )
      // What the seed wrote is recorded as the cloud's (origin 'cloud'): the push never sends the cloud its own rows back.
      const seededChanges = await site.handle.db
        .selectFrom('link_outbox')
        .select(['origin', 'table_name'])
        .where('org_id', '=', local!.id)
        .where('table_name', 'in', ['sites', 'controllers', 'instances'])
        .execute()
      assert.equal(seededChanges.length, 2 + 2 + 4)
      assert.deepEqual([...new Set(seededChanges.map((c) => c.origin))], ['cloud'])
      // The import's own audit record is this server's (it goes up like any audit record of the site server).
      const imported = await site.handle.db
        .selectFrom('link_outbox')
        .select(['origin', 'row'])
        .where('org_id', '=', local!.id)
        .where('table_name', '=', 'audit_events')
        .execute()
      assert.deepEqual(
        imported.filter((r) => JSON.parse(r.row).action === 'tenant.imported').map((r) => r.origin),
        ['', ''],
      )

      // The cloud shows it enrolled, with the versions it announced.
      const listed = await cell.as('GET', `/api/admin/site-servers/${registered.id}`)
      assert.equal(listed.json().status, 'enrolled')
      assert.equal(listed.json().peerVersions.protocol, LINK_PROTOCOL)

      // Revoke: the credential gets exactly the uniform 401 of an unknown one.
      const seed = (bearer: string) =>
        cell.cloud.inject(
          { org: cell.org, bearer },
          { method: 'GET', url: '/api/link/seed?site=S1', headers: { 'sitegrid-link-protocol': String(LINK_PROTOCOL) } },
        )
      assert.equal((await seed(credential!)).statusCode, 200)
      assert.equal((await cell.as('POST', `/api/admin/site-servers/${registered.id}/revoke`)).statusCode, 200)
      const revoked = await seed(credential!)
      const unknown = await seed(`slk_${registered.id}_${'x'.repeat(32)}`)
      assert.equal(revoked.statusCode, 401)
      assert.deepEqual(comparableBody(revoked.body), comparableBody(unknown.body))
      assert.deepEqual(comparableHeaders(revoked.headers), comparableHeaders(unknown.headers))
      assert.equal((await cell.as('GET', `/api/admin/site-servers/${registered.id}`)).json().status, 'revoked')

      // A new code for the same server: re-enrolling keeps its id, its epoch and its mark; nothing is seeded again.
      const again = await cell.as('POST', `/api/admin/site-servers/${registered.id}/enrolment-code`)
      assert.equal(again.statusCode, 201, again.body)
      assert.equal(again.json().id, registered.id)
      const second = await enrolment.enrol({ cloudUrl: cell.url, code: again.json().enrolmentCode, http: cell.http, actor: CLI_ACTOR })
      assert.deepEqual([second.serverId, second.epoch, second.isReenrolment, second.seeded], [registered.id, result.epoch, true, []])
      // Kept, not restarted: the site's agent (running in this app) may have pulled on since the first enrolment.
      const notBefore = (a: { tx: number; seq: number }, b: { tx: number; seq: number }) => a.tx > b.tx || (a.tx === b.tx && a.seq >= b.seq)
      assert.ok(notBefore(second.mark, result.mark), `mark ${JSON.stringify(second.mark)} went back from ${JSON.stringify(result.mark)}`)
      const renewed = await enrolment.credential(local!.id)
      assert.notEqual(renewed, credential)
      assert.equal((await seed(renewed!)).statusCode, 200)
      assert.equal((await seed(credential!)).statusCode, 401, 'the revoked credential stays dead')
      assert.equal((await cell.as('GET', `/api/admin/site-servers/${registered.id}`)).json().status, 'enrolled')
      assert.equal((await site.inject(onSite, { method: 'GET', url: '/api/sites/S1/instances' })).json().items.length, 2, 'no duplicate')

      const actions = await cell.cloud.handle.db
        .selectFrom('audit_events')
        .select('action')
        .where('org_id', '=', cell.org.id)
        .where('target', '=', registered.id)
        .execute()
      assert.deepEqual(
        actions.map((a) => a.action).sort(), // one clock instant (the test's): the order is not kept
        ['site_server.code_issued', 'site_server.enrolled', 'site_server.enrolled', 'site_server.registered', 'site_server.revoked'],
      )
    })

    it("a site server holding another organisation's data is refused (409 LinkOrgMismatch naming both ids) and the code still enrols one that holds none", async (t) => {
      const cell = await cloudCell(t, dialect)
      const registered = await register(cell.cloud, cell.owner)
      const foreign = await siteServer(t)
      const theirs = await foreign.orgs.provision('other-co', 'Other Co')
      await assert.rejects(
        foreign.enrolment.enrol({ cloudUrl: cell.url, code: registered.code, http: cell.http, actor: CLI_ACTOR }),
        (err: Error & { code?: string }) => err.code === 'LinkOrgMismatch' && err.message.includes(theirs.id) && err.message.includes(cell.org.id),
      )
      assert.equal((await foreign.site.handle.db.selectFrom('link_peer').selectAll().execute()).length, 0, 'nothing stored on the site')
      assert.equal((await foreign.site.handle.db.selectFrom('sites').selectAll().execute()).length, 0)
      // Straight to the endpoint: both ids in the problem.
      const direct = await postJson(cell.port, cell.host, '/api/link/enrol', { code: registered.code, orgId: theirs.id, protocol: LINK_PROTOCOL, schema: 'x' })
      assert.equal(direct.status, 409)
      const problem = JSON.parse(direct.body)
      assert.deepEqual([problem.code, problem.siteOrgId, problem.cloudOrgId], ['LinkOrgMismatch', theirs.id, cell.org.id])
      assert.equal((await cell.as('GET', `/api/admin/site-servers/${registered.id}`)).json().status, 'registered')

      const empty = await siteServer(t)
      const result = await empty.enrolment.enrol({ cloudUrl: cell.url, code: registered.code, http: cell.http, actor: CLI_ACTOR })
      assert.equal(result.serverId, registered.id)
      assert.deepEqual(result.seeded, ['S1', 'S2'])
    })

    it('a site server enrolled with one cloud is refused another (409) before the code is sent', async (t) => {
      const cell = await cloudCell(t, dialect)
      const { enrolment } = await siteServer(t)
      const first = await register(cell.cloud, cell.owner, ['S1'])
      await enrolment.enrol({ cloudUrl: cell.url, code: first.code, http: cell.http, actor: CLI_ACTOR })
      const second = await register(cell.cloud, cell.owner, ['S2'])
      await assert.rejects(
        enrolment.enrol({ cloudUrl: `http://elsewhere.localhost:${cell.port}`, code: second.code, http: cell.http, actor: CLI_ACTOR }),
        (err: Error & { code?: string }) => err.code === 'Conflict',
      )
      // Its code was not sent, so it is still usable; here by the same site server, whose re-enrolment names the server
      // it is enrolled as: the cloud refuses a code of another server (409), and the code is still not used up.
      await assert.rejects(
        enrolment.enrol({ cloudUrl: cell.url, code: second.code, http: cell.http, actor: CLI_ACTOR }),
        (err: Error & { code?: string }) => err.code === 'Conflict' && err.message.includes('another site server'),
      )
      assert.equal((await cell.as('GET', `/api/admin/site-servers/${second.id}`)).json().status, 'registered')
      const fresh = await siteServer(t)
      assert.equal((await fresh.enrolment.enrol({ cloudUrl: cell.url, code: second.code, http: cell.http, actor: CLI_ACTOR })).serverId, second.id)
    })

    it('a seed cut off by the network resumes with the stored credential, without a new code, and ends seeded once', async (t) => {
      const cell = await cloudCell(t, dialect)
      const { site, orgs, enrolment } = await siteServer(t)
      const registered = await register(cell.cloud, cell.owner)
      let cut = true
      const flaky = {
        request: (path: string, init: Parameters<typeof cell.http.request>[1]) =>
          cut && path.includes('site=S2') ? Promise.reject(new Error('ECONNRESET')) : cell.http.request(path, init),
      }
      await assert.rejects(
        enrolment.enrol({ cloudUrl: cell.url, code: registered.code, http: flaky, actor: CLI_ACTOR }),
        (err: Error & { code?: string }) => err.code === 'LinkCloudUnavailable',
      )
      const local = (await orgs.findBySlug(cell.org.slug))!
      assert.equal((await site.handle.db.selectFrom('link_marks').selectAll().execute()).length, 0, 'not seeded yet: no mark')
      assert.ok(await enrolment.credential(local.id), 'the credential is kept')
      assert.deepEqual(await enrolment.peer(), { orgId: local.id, serverId: registered.id, cloudUrl: cell.url, sites: ['S1', 'S2'] })
      cut = false
      const resumed = await enrolment.resumeSeeding({ http: flaky, actor: CLI_ACTOR })
      // S1 came in the cut run (its position is unknown now): the pull starts from the beginning; S2 is seeded now.
      assert.deepEqual([resumed.seeded, resumed.mark], [['S2'], { tx: 0, seq: 0 }])
      const key = await site.mintKey(local, 'owner')
      for (const code of ['S1', 'S2']) {
        const here = await site.inject({ org: local, apiKey: key.plaintext }, { method: 'GET', url: `/api/sites/${code}/instances` })
        assert.deepEqual(here.json(), (await cell.as('GET', `/api/sites/${code}/instances`)).json())
      }
      assert.deepEqual(await enrolment.resumeSeeding({ http: flaky, actor: CLI_ACTOR }), { seeded: [], mark: { tx: 0, seq: 0 } }, 'once')
    })

    it('50 concurrent enrolments with one code: exactly one 200, the others the uniform 401', async (t) => {
      const cell = await cloudCell(t, dialect)
      const registered = await register(cell.cloud, cell.owner)
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          postJson(cell.port, cell.host, '/api/link/enrol', { code: registered.code, orgId: null, protocol: LINK_PROTOCOL, schema: 'x' }),
        ),
      )
      const statuses = answers.map((a) => a.status).sort()
      assert.deepEqual(statuses, [200, ...Array(49).fill(401)])
      const verifiers = await cell.cloud.handle.db
        .selectFrom('site_servers')
        .select(['credential_verifier', 'code_hash'])
        .where('id', '=', registered.id)
        .execute()
      assert.equal(verifiers.length, 1)
      assert.notEqual(verifiers[0]!.credential_verifier, null)
      assert.equal(verifiers[0]!.code_hash, null)
      const enrolled = await cell.cloud.handle.db
        .selectFrom('audit_events')
        .select('id')
        .where('org_id', '=', cell.org.id)
        .where('action', '=', 'site_server.enrolled')
        .execute()
      assert.equal(enrolled.length, 1)
    })

    it('an expired code (24 h) gets the uniform 401 and stores nothing on the site', async (t) => {
      const cell = await cloudCell(t, dialect)
      const { site, enrolment } = await siteServer(t)
      const registered = await register(cell.cloud, cell.owner)
      cell.cloud.clock.advance(DAY_MS)
      await assert.rejects(
        enrolment.enrol({ cloudUrl: cell.url, code: registered.code, http: cell.http, actor: CLI_ACTOR }),
        (err: Error & { code?: string }) => err.code === 'Unauthorized',
      )
      assert.equal((await site.handle.db.selectFrom('orgs').selectAll().execute()).length, 0)
      const direct = await postJson(cell.port, cell.host, '/api/link/enrol', { code: registered.code, orgId: null, protocol: LINK_PROTOCOL, schema: 'x' })
      assert.equal(direct.status, 401)
      assert.equal(JSON.parse(direct.body).code, 'Unauthorized')
    })

    it('a protocol the cloud does not speak is refused (409 LinkVersionMismatch, with the cloud versions in the headers) and the code stays usable', async (t) => {
      const cell = await cloudCell(t, dialect)
      const registered = await register(cell.cloud, cell.owner)
      const res = await cell.cloud.inject(undefined, {
        method: 'POST',
        url: '/api/link/enrol',
        host: cell.host,
        payload: { code: registered.code, orgId: null, protocol: LINK_PROTOCOL + 1, schema: 'x' },
      })
      assert.equal(res.statusCode, 409)
      assert.equal(res.json().code, 'LinkVersionMismatch')
      assert.equal(res.headers['sitegrid-link-protocol'], String(LINK_PROTOCOL))
      assert.match(String(res.headers['sitegrid-schema']), /^\d{4}-/)
      const ok = await cell.cloud.inject(undefined, {
        method: 'POST',
        url: '/api/link/enrol',
        host: cell.host,
        payload: { code: registered.code, orgId: null, protocol: LINK_PROTOCOL, schema: 'x' },
      })
      assert.equal(ok.statusCode, 200, ok.body)
    })
  })
}
