import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects, type Harness } from '../../../../test/harness.ts'
import { startTcpProxy } from '../../../../test/support/tcp-proxy.ts'
import { CLI_ACTOR } from '../../../identity.ts'
import { createOrgsService } from '../../orgs/service.ts'
import { standardParts, upload } from '../../historian/test-setup.ts'
import { alarmEvent, cloudCell, FAST_LINK, register, siteServer, until } from '../enrolment/test-link.ts'
import { createLinkHttp } from './http.ts'

// The site server's agent against a cloud cell, in one process each side of a loopback TCP proxy the test cuts (the
// real-process version, with two cloud processes, is test/fleet/fleet-link.test.ts). Fast timings: the agent looks for
// local changes every 20 ms, long-polls 1 s and retries at most every 200 ms (FAST_LINK).

/** hh:mm:ss of the i-th second of a day. */
const timeOf = (i: number) => new Date(i * 1000).toISOString().slice(11, 19)

for (const dialect of testDialects()) {
  describe(`${dialect} cloud, SQLite site server: the fleet link's agent (issue 26)`, () => {
    it('seeds, carries changes both ways, settles edits made on both sides during a cut, forwards an alarm action, survives a revoke', async (t) => {
      const cell = await cloudCell(t, dialect, { SITEGRID_LINK_PULL_POLL_MS: '20' })
      const proxy = await startTcpProxy(cell.port)
      t.after(() => proxy.close())
      const cloudUrl = `http://${cell.host}:${proxy.port}`
      const { site, orgs, enrolment } = await siteServer(t, FAST_LINK)
      const server = await register(cell.cloud, cell.owner, ['S1'])
      const http = createLinkHttp({ cloudUrl, env: {}, timeoutMs: 30_000 })
      t.after(() => http.close())
      await enrolment.enrol({ cloudUrl, code: server.code, http, actor: CLI_ACTOR })
      const local = (await orgs.findBySlug(cell.org.slug))!
      const siteKey = (await site.mintKey(local, 'owner')).plaintext
      const onSite = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
        site.inject({ org: local, apiKey: siteKey }, { method, url, ...(payload ? { payload } : {}) })
      const inCloud = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
        cell.cloud.inject(cell.owner, { method, url, ...(payload ? { payload } : {}) })
      const list = async (h: Harness, url: string, as: typeof onSite) => {
        const res = await as('GET', url)
        assert.equal(res.statusCode, 200, `${h.config.mode} ${url}: ${res.body}`)
        return res.json().items as Array<Record<string, unknown>>
      }
      const controllers = (h: Harness, as: typeof onSite) => list(h, '/api/sites/S1/controllers', as)
      const instances = (h: Harness, as: typeof onSite) => list(h, '/api/sites/S1/instances', as)
      const same = async (what: string, read: (h: Harness, as: typeof onSite) => Promise<unknown>) => {
        await until(
          what,
          async () => [await read(cell.cloud, inCloud), await read(site, onSite)],
          ([a, b]) => JSON.stringify(a) === JSON.stringify(b),
        )
      }

      // Seeded: the site's equipment is the cloud's.
      const [plc] = await controllers(cell.cloud, inCloud)
      assert.ok(plc)
      await same('seeded controllers', controllers)
      await site.app.ready() // the agent starts with the server

      // Down: a cloud edit reaches the site.
      assert.equal((await inCloud('PUT', `/api/sites/S1/controllers/${plc.id}`, { name: 'Crusher PLC (cloud)' })).statusCode, 200)
      await same('a cloud edit', controllers)

      // Up: alarm events accepted on the site reach the cloud.
      const t0 = Date.now()
      assert.equal((await onSite('POST', '/api/sites/S1/alarms/events', { events: [alarmEvent('e1', 'CV-1', t0)] })).statusCode, 200)
      const alarms = (h: Harness, as: typeof onSite) => list(h, '/api/sites/S1/alarms', as)
      await same('an alarm raised on the site', alarms)

      // A cut: both sides keep working; the site edits the controller the cloud edits too, and an instance the cloud
      // leaves alone; the cloud deletes another instance; alarms keep coming on the site.
      proxy.cut()
      assert.equal((await inCloud('PUT', `/api/sites/S1/controllers/${plc.id}`, { name: 'renamed in the cloud' })).statusCode, 200)
      assert.equal(
        (await onSite('PUT', `/api/sites/S1/controllers/${plc.id}`, { connection: { protocol: 'EtherNet/IP', ipAddress: '10.9.9.9' } })).statusCode,
        200,
      )
      assert.equal((await onSite('PUT', '/api/sites/S1/instances/CV-1', { name: 'Conveyor 1 (site)' })).statusCode, 200)
      assert.equal((await inCloud('DELETE', '/api/sites/S1/instances/CV-2')).statusCode, 204)
      // A historian import on the site while offline: 3 000 samples, two chunks of the link's default size.
      const trend = ['timestamp,tag,value', ...Array.from({ length: 3000 }, (_, i) => `2026-01-01 ${timeOf(i)},A,${i / 10}`)].join('\n')
      const imported = await upload(
        site,
        { org: local, apiKey: siteKey },
        standardParts('S1', 'long', `${trend}\n`, 'historian_tag,instance_id,tag_key\nA,CV-1,speed\n'),
      )
      assert.equal(imported.statusCode, 201, imported.body)
      const offline = Array.from({ length: 50 }, (_, i) => alarmEvent(`off-${i}`, 'CV-1', t0 + 1000 + i))
      assert.equal((await onSite('POST', '/api/sites/S1/alarms/events', { events: offline })).statusCode, 200)
      await until(
        'the site sees the link down',
        async () => (await onSite('GET', '/api/link')).json(),
        (s) => s.state === 'offline' && s.up.items > 0,
      )
      proxy.heal()

      // Healed: the two converge; the cloud's edit of the controller won, the site's went to a conflict record.
      await same('controllers after the cut', controllers)
      await same('instances after the cut', instances)
      await same('alarms after the cut', alarms)
      const series = async (_h: Harness, as: typeof onSite) => {
        const res = await as('GET', '/api/sites/S1/historian/series?instanceId=CV-1&tag=speed&limit=10000')
        assert.equal(res.statusCode, 200, res.body)
        return res.json().samples
      }
      await same('the historian samples made offline', series)
      assert.equal((await series(cell.cloud, inCloud)).length, 3000)
      await same('historian batches', (h, as) => list(h, '/api/historian/import-batches?siteId=S1', as))
      const [settled] = await controllers(cell.cloud, inCloud)
      assert.equal(settled!.name, 'renamed in the cloud')
      assert.equal((settled!.connection as { ipAddress: string }).ipAddress, '10.20.1.15', 'the cloud wins')
      assert.deepEqual(
        (await instances(cell.cloud, inCloud)).map((i) => [i.id, i.name]),
        [['CV-1', 'Conveyor 1 (site)']],
      )
      const conflicts = (await inCloud('GET', '/api/link/conflicts')).json().items as Array<Record<string, unknown>>
      assert.deepEqual(
        conflicts.map((c) => [c.table, c.serverId, (c.losingRow as { ip_address: string }).ip_address]),
        [['controllers', server.id, '10.9.9.9']],
      )
      await until(
        'the conflict shown on the site',
        async () => (await onSite('GET', '/api/link')).json(),
        (s) => s.unresolvedConflicts === 1 && s.state === 'online' && s.up.items === 0,
      )
      const cloudEvents = await cell.cloud.handle.db.selectFrom('alarm_events').select('event_id').where('org_id', '=', cell.org.id).execute()
      assert.equal(cloudEvents.length, 51, 'every event once')

      // A cloud action on the site's alarm is forwarded, applied there, and its effect comes back up.
      const alarm = (await alarms(cell.cloud, inCloud))[0]!
      const ack = await inCloud('POST', `/api/sites/S1/alarms/${alarm.alarmId}/acknowledge`, { comment: 'from head office' })
      assert.equal(ack.statusCode, 202, ack.body)
      await until(
        'the forwarded acknowledge applied and reported',
        async () => (await inCloud('GET', `/api/sites/S1/alarms/${alarm.alarmId}/commands`)).json().items as Array<{ status: string }>,
        (items) => items.length === 1 && items[0]!.status === 'applied',
      )
      await same('alarms after the forwarded acknowledge', alarms)
      assert.equal(((await alarms(cell.cloud, inCloud))[0]!.state as string).endsWith('_acknowledged'), true)

      // Suspended by the cell's operator: the same 401, shown as revoked, the site keeps working; resumed, the link
      // carries on by itself (asked again at the longest back-off) with what was made meanwhile.
      const operator = createOrgsService({ handle: cell.cloud.handle, clock: cell.cloud.clock })
      await operator.suspend(cell.org.slug)
      await until(
        'the site sees the suspension',
        async () => (await onSite('GET', '/api/link')).json(),
        (s) => s.state === 'revoked',
      )
      assert.equal((await onSite('PUT', '/api/sites/S1/instances/CV-1', { name: 'edited while suspended' })).statusCode, 200)
      await operator.resume(cell.org.slug)
      await same('instances after the resume', instances)
      assert.equal((await instances(cell.cloud, inCloud))[0]!.name, 'edited while suspended')
      assert.equal((await onSite('GET', '/api/link')).json().state, 'online')

      // Revoked: the uniform 401 on the link, the site keeps working; a new code resumes without loss.
      assert.equal((await inCloud('POST', `/api/admin/site-servers/${server.id}/revoke`)).statusCode, 200)
      await until(
        'the site sees the revoke',
        async () => (await onSite('GET', '/api/link')).json(),
        (s) => s.state === 'revoked',
      )
      assert.equal((await onSite('PUT', '/api/sites/S1/instances/CV-1', { name: 'edited while revoked' })).statusCode, 200)
      const renewed = await inCloud('POST', `/api/admin/site-servers/${server.id}/enrolment-code`)
      assert.equal(renewed.statusCode, 201, renewed.body)
      const again = await enrolment.enrol({ cloudUrl, code: renewed.json().enrolmentCode, http, actor: CLI_ACTOR })
      assert.equal(again.serverId, server.id)
      await same('instances after re-enrolment', instances)
      assert.equal((await instances(cell.cloud, inCloud))[0]!.name, 'edited while revoked')
    })
  })
}
