// Issue 30: PUT/GET /api/sites/{siteId}/edges/{edgeId}/status, GET …/edges, and the controllers' COMM_LOSS alarms.
import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { sql } from 'kysely'
import { describe, it } from 'node:test'
import { harness, sleep, testDialects, type TestDialect } from '../../../test/harness.ts'
import { withSystemScope } from '../../db/tenant-scope.ts'
import { createSiteServices } from '../../site-services.ts'
import { createAlarmsService } from '../alarms/service.ts'
import { createController, equipmentSetup, type As } from '../controllers/test-support.ts'
import { createEdgesService } from './service.ts'

const STATUS = '/api/sites/S1/edges/GW-1/status'
const STALE_MS = 60_000

type Report = { controllerId: string; communication: 'ok' | 'failed'; lastGoodPollAt?: string | null; errorCount?: number; lastError?: string }
const heartbeat = (controllers: Report[], over: Record<string, unknown> = {}) => ({
  gatewayVersion: '2.4.1',
  controllers: controllers.map((c) => ({ lastGoodPollAt: null, errorCount: 0, ...c })),
  ...over,
})

/** A site with two controllers on GW-1 and one on GW-2. */
async function gateways(t: TestContext, dialect: TestDialect) {
  const setup = await equipmentSetup(t, dialect)
  const { as } = setup
  const [a, b, other] = [await createController(as), await createController(as), await createController(as)]
  for (const [c, edgeId] of [
    [a, 'GW-1'],
    [b, 'GW-1'],
    [other, 'GW-2'],
  ] as const) {
    const res = await as('POST', `/api/sites/S1/controllers/${c.id}/assign`, { edgeId })
    assert.equal(res.statusCode, 200, res.body)
  }
  return { ...setup, a: a.id, b: b.id, other: other.id }
}

/** Site S1 with one controller on gateway GW-1, whose first heartbeat reported it failed (its COMM_LOSS alarm raised). */
async function alarmedGateway(h: Awaited<ReturnType<typeof harness>>) {
  const { org, key } = await h.orgWithKey('admin')
  const as: As = (method, url, payload) => h.inject({ org, apiKey: key }, { method: method as 'GET', url, payload: payload as object })
  assert.equal((await as('POST', '/api/sites', { code: 'S1', name: 'Plant' })).statusCode, 201)
  const controller = await createController(as)
  await as('POST', `/api/sites/S1/controllers/${controller.id}/assign`, { edgeId: 'GW-1' })
  assert.equal((await as('PUT', STATUS, heartbeat([{ controllerId: controller.id, communication: 'failed' }]))).statusCode, 200)
  return { org, as, controller }
}

/**
 * Every update of the organisation's alarms is skipped from now on (as when another writer won each attempt's race),
 * until the returned function drops the trigger that does it.
 */
async function loseAlarmRaces(h: Awaited<ReturnType<typeof harness>>, dialect: TestDialect, orgId: string): Promise<() => Promise<void>> {
  const name = sql.raw(`edge_lose_race_${orgId.toLowerCase()}`)
  const orgLit = sql.lit(orgId)
  if (dialect === 'sqlite')
    await sql`create trigger ${name} before update on alarms when old.org_id = ${orgLit} begin select raise(ignore); end`.execute(h.handle.db)
  else {
    await sql`create function ${name}() returns trigger language plpgsql as $$ begin return null; end $$`.execute(h.handle.db)
    await sql`create trigger ${name} before update on alarms for each row when (old.org_id = ${orgLit}) execute function ${name}()`.execute(h.handle.db)
  }
  return async () => {
    if (dialect === 'sqlite') await sql`drop trigger ${name}`.execute(h.handle.db)
    else {
      await sql`drop trigger ${name} on alarms`.execute(h.handle.db)
      await sql`drop function ${name}()`.execute(h.handle.db)
    }
  }
}

async function commAlarms(as: As) {
  const res = await as('GET', '/api/sites/S1/alarms?limit=100')
  assert.equal(res.statusCode, 200, res.body)
  return (res.json().items as Array<{ alarmId: string; instanceId: string; condition: string; isActive: boolean; raisedAt: string }>).filter(
    (a) => a.condition === 'COMM_LOSS',
  )
}

for (const dialect of testDialects()) {
  describe(`${dialect}: edge gateway status`, () => {
    it('stores the latest heartbeat per gateway and controller; a controller of another gateway is refused alone; a resend changes nothing', async (t) => {
      const { as, a, b, other } = await gateways(t, dialect)
      const before = await as('GET', STATUS)
      assert.equal(before.statusCode, 200)
      assert.equal(before.json().state, 'stale', 'no heartbeat yet')
      assert.equal(before.json().lastHeartbeatAt, null)

      const body = heartbeat(
        [
          { controllerId: a, communication: 'ok', lastGoodPollAt: '2026-01-01T00:00:00.000Z', errorCount: 3 },
          { controllerId: other, communication: 'ok' },
          { controllerId: b, communication: 'ok' },
        ],
        { message: 'all good' },
      )
      const res = await as('PUT', STATUS, body)
      assert.equal(res.statusCode, 200, res.body)
      const result = res.json()
      assert.equal(result.accepted, 2)
      assert.equal(result.refused, 1)
      assert.deepEqual(
        result.results.map((r: { status: string; code?: string }) => [r.status, r.code ?? null]),
        [
          ['accepted', null],
          ['refused', 'ControllerNotOnEdge'],
          ['accepted', null],
        ],
      )
      assert.equal(result.status.state, 'online')
      assert.equal(result.status.gatewayVersion, '2.4.1')
      assert.equal(result.status.message, 'all good')
      const first = result.status.controllers.find((c: { controllerId: string }) => c.controllerId === a)
      assert.equal(first.state, 'online')
      assert.equal(first.errorCount, 3)
      assert.equal(first.lastGoodPollAt, '2026-01-01T00:00:00.000Z')

      const again = await as('PUT', STATUS, body)
      assert.equal(again.statusCode, 200)
      assert.deepEqual(again.json(), result, 'the same heartbeat at the same time answers the same')
      const gw2 = await as('GET', '/api/sites/S1/edges/GW-2/status')
      assert.equal(gw2.json().controllers[0].state, 'stale', "GW-1's report of GW-2's controller was not stored")
      assert.equal((await commAlarms(as)).length, 0)

      const list = await as('GET', '/api/sites/S1/edges')
      assert.equal(list.statusCode, 200)
      assert.deepEqual(
        list.json().items.map((g: { edgeId: string; state: string; controllers: unknown[] }) => [g.edgeId, g.state, g.controllers.length]),
        [
          ['GW-1', 'online', 2],
          ['GW-2', 'stale', 1],
        ],
      )
    })

    it('a controller reported twice is a 400 naming it, and a gateway with nothing assigned a 404; neither stores anything', async (t) => {
      const { as, a } = await gateways(t, dialect)
      const twice = await as(
        'PUT',
        STATUS,
        heartbeat([
          { controllerId: a, communication: 'ok' },
          { controllerId: a, communication: 'failed' },
        ]),
      )
      assert.equal(twice.statusCode, 400)
      assert.equal(twice.json().code, 'ValidationFailed')
      assert.equal(twice.json().errors[0].pointer, '/controllers/1/controllerId')
      const unknown = await as('PUT', '/api/sites/S1/edges/GW-9/status', heartbeat([]))
      assert.equal(unknown.statusCode, 404)
      assert.equal(unknown.json().code, 'NotFound')
      const negative = await as('PUT', STATUS, heartbeat([{ controllerId: a, communication: 'ok', errorCount: -1 }]))
      assert.equal(negative.statusCode, 400)
      assert.equal(negative.json().errors[0].pointer, '/controllers/0/errorCount')
      assert.equal((await as('GET', STATUS)).json().lastHeartbeatAt, null)
    })

    it('a gateway is faulted when it says so or when a controller fails; a failed controller raises one COMM_LOSS alarm, cleared when it reports ok', async (t) => {
      const { h, as, a, b } = await gateways(t, dialect)
      const selfFault = await as('PUT', STATUS, heartbeat([{ controllerId: a, communication: 'ok' }], { faulted: true, message: 'disk full' }))
      assert.equal(selfFault.json().status.state, 'faulted')
      assert.equal(selfFault.json().status.faulted, true)

      const failing = heartbeat([
        { controllerId: a, communication: 'failed', lastError: 'connection refused' },
        { controllerId: b, communication: 'ok' },
      ])
      const failed = await as('PUT', STATUS, failing)
      assert.equal(failed.json().status.state, 'faulted', 'a failing controller faults its gateway')
      const states = new Map(failed.json().status.controllers.map((c: { controllerId: string; state: string }) => [c.controllerId, c.state]))
      assert.equal(states.get(a), 'faulted')
      assert.equal(states.get(b), 'online')
      h.clock.advance(5000)
      assert.equal((await as('PUT', STATUS, failing)).statusCode, 200, 'still failing')
      let alarms = await commAlarms(as)
      assert.equal(alarms.length, 1, 'one open alarm for the controller')
      assert.equal(alarms[0]!.instanceId, a)
      assert.equal(alarms[0]!.isActive, true)
      const detail = (await as('GET', `/api/sites/S1/alarms/${alarms[0]!.alarmId}`)).json()
      assert.equal(detail.history[0].actorKind, 'system')

      h.clock.advance(5000)
      const recovered = await as('PUT', STATUS, heartbeat([{ controllerId: a, communication: 'ok' }]))
      assert.equal(recovered.json().status.state, 'online')
      alarms = await commAlarms(as)
      assert.equal(alarms.length, 1)
      assert.equal(alarms[0]!.isActive, false, 'returned to normal')
    })

    it('stale with the injected clock: no heartbeat within the stale time makes the gateway and its controllers stale and raises COMM_LOSS when they went stale', async (t) => {
      const { h, as, a, b } = await gateways(t, dialect)
      const reportedAt = h.clock.now()
      await as(
        'PUT',
        STATUS,
        heartbeat([
          { controllerId: a, communication: 'ok' },
          { controllerId: b, communication: 'ok' },
        ]),
      )
      h.clock.advance(STALE_MS - 1)
      assert.equal((await as('GET', STATUS)).json().state, 'online', 'within the stale time')
      assert.equal((await commAlarms(as)).length, 0)

      h.clock.advance(1)
      const stale = (await as('GET', STATUS)).json()
      assert.equal(stale.state, 'stale')
      assert.deepEqual(
        stale.controllers.map((c: { state: string }) => c.state),
        ['stale', 'stale'],
      )
      let alarms = await commAlarms(as)
      assert.equal(alarms.length, 2, 'one per controller that was reporting')
      assert.ok(alarms.every((x) => x.isActive && Date.parse(x.raisedAt) === reportedAt + STALE_MS))
      h.clock.advance(STALE_MS)
      await as('GET', '/api/sites/S1/edges')
      assert.equal((await commAlarms(as)).length, 2, 'a later read raises nothing more')

      await as('PUT', STATUS, heartbeat([{ controllerId: a, communication: 'ok' }]))
      alarms = await commAlarms(as)
      assert.deepEqual(alarms.map((x) => [x.instanceId === a, x.isActive]).sort(), [
        [false, true],
        [true, false],
      ])
    })

    it("a controller moved to another gateway is not alarmed by its old gateway's silence, and its old report is dropped", async (t) => {
      const { h, as, a, b } = await gateways(t, dialect)
      await as(
        'PUT',
        STATUS,
        heartbeat([
          { controllerId: a, communication: 'ok' },
          { controllerId: b, communication: 'ok' },
        ]),
      )
      assert.equal((await as('POST', `/api/sites/S1/controllers/${b}/assign`, { edgeId: 'GW-2' })).statusCode, 200)
      h.clock.advance(STALE_MS)
      await as('GET', STATUS)
      const alarms = await commAlarms(as)
      assert.deepEqual(
        alarms.map((x) => x.instanceId),
        [a],
      )
      const rows = await h.handle.db.selectFrom('edge_controller_status').select('controller_id').where('controller_id', '=', b).execute()
      assert.equal(rows.length, 0)
    })

    it('a controller deleted while its COMM_LOSS alarm is active: the next read of the status returns the alarm to normal and drops its report', async (t) => {
      const { h, as, a, b } = await gateways(t, dialect)
      await as(
        'PUT',
        STATUS,
        heartbeat([
          { controllerId: a, communication: 'failed', lastError: 'timeout' },
          { controllerId: b, communication: 'failed' },
        ]),
      )
      assert.deepEqual(
        (await commAlarms(as)).map((x) => x.isActive),
        [true, true],
      )
      h.clock.advance(1000)
      const removed = await as('DELETE', `/api/sites/S1/controllers/${a}`)
      assert.equal(removed.statusCode, 204, removed.body)
      const status = (await as('GET', STATUS)).json()
      assert.deepEqual(
        status.controllers.map((c: { controllerId: string }) => c.controllerId),
        [b],
      )
      const alarms = new Map((await commAlarms(as)).map((x) => [x.instanceId, x]))
      assert.equal(alarms.get(a)?.isActive, false, 'returned to normal')
      assert.equal(alarms.get(b)?.isActive, true, "the other controller's alarm stays")
      const history = (await as('GET', `/api/sites/S1/alarms/${alarms.get(a)!.alarmId}`)).json().history
      assert.equal(history.at(-1).actorKind, 'system')
      const rows = await h.handle.db.selectFrom('edge_controller_status').select('controller_id').where('controller_id', '=', a).execute()
      assert.deepEqual(rows, [])
      // Later reads send nothing more.
      await as('GET', '/api/sites/S1/edges')
      assert.equal((await commAlarms(as)).length, 2)
    })

    it('a site with gateway heartbeats and a raised COMM_LOSS is deleted whole (its status rows go with it)', async (t) => {
      const { h, org, as, a } = await gateways(t, dialect)
      await as('PUT', STATUS, heartbeat([{ controllerId: a, communication: 'failed' }]))
      const removed = await as('DELETE', '/api/sites/S1?confirm=S1')
      assert.equal(removed.statusCode, 204, removed.body)
      for (const table of ['edge_gateways', 'edge_controller_status'] as const) {
        const rows = await h.handle.db.selectFrom(table).select('site_code').where('org_id', '=', org.id).execute()
        assert.equal(rows.length, 0, table)
      }
    })

    it('cloud, a site its site server keeps: a heartbeat is stored and answered, and raises no alarm there', async (t) => {
      const h = await harness(t, dialect, { SITEGRID_MODE: 'cloud' })
      const { org, key } = await h.orgWithKey('admin')
      const as: As = (method, url, payload) => h.inject({ org, apiKey: key }, { method: method as 'GET', url, payload: payload as object })
      assert.equal((await as('POST', '/api/sites', { code: 'S1', name: 'Plant' })).statusCode, 201)
      const controller = await createController(as)
      await as('POST', `/api/sites/S1/controllers/${controller.id}/assign`, { edgeId: 'GW-1' })
      await h.handle.db
        .insertInto('site_servers')
        .values({
          org_id: org.id,
          id: 'srv_1',
          name: 'plant server',
          sites: JSON.stringify(['S1']),
          code_hash: null,
          code_expires_at: null,
          credential_verifier: null,
          epoch: null,
          created_at: h.clock.now(),
          created_by: 'test',
          enrolled_at: null,
          revoked_at: null,
          revoked_by: null,
          last_contact_at: null,
          last_error: null,
          peer_versions: null,
          backlog: null,
        })
        .execute()
      const res = await as('PUT', STATUS, heartbeat([{ controllerId: controller.id, communication: 'failed' }]))
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().status.state, 'faulted')
      assert.equal((await commAlarms(as)).length, 0)
    })

    it('a heartbeat whose alarm write loses its race answers 503 with Retry-After and stores nothing; the next one applies', async (t) => {
      const h = await harness(t, dialect, {}, { alarmWrites: { writeRetryDeadlineMs: 0 } })
      const { org, as, controller } = await alarmedGateway(h)
      const winAlarmRaces = await loseAlarmRaces(h, dialect, org.id)
      h.clock.advance(1000)
      const recovered = heartbeat([{ controllerId: controller.id, communication: 'ok' }])
      const busy = await as('PUT', STATUS, recovered)
      assert.deepEqual([busy.statusCode, busy.json().code, busy.headers['retry-after']], [503, 'ServiceUnavailable', '1'], busy.body)
      const stored = await h.handle.db.selectFrom('edge_controller_status').select(['communication', 'is_alarmed']).where('org_id', '=', org.id).execute()
      assert.deepEqual(stored, [{ communication: 'failed', is_alarmed: 1 }], 'the flags stay as they were')
      await winAlarmRaces()
      assert.equal((await as('PUT', STATUS, recovered)).statusCode, 200)
      const alarms = await commAlarms(as)
      assert.deepEqual(
        alarms.map((a) => a.isActive),
        [false],
        'the resend cleared the alarm',
      )
    })

    it("past SITEGRID_EDGE_STATUS_QUEUE_MAX heartbeats waiting for the site's turn, one more answers 503 with Retry-After at once; the waiting ones are stored", async (t) => {
      const h = await harness(t, dialect, { SITEGRID_EDGE_STATUS_QUEUE_MAX: '3' })
      const { org, as, controller } = await alarmedGateway(h)
      // The site's turn is held by a heartbeat whose clearing alarm write keeps losing its race (retried until the test
      // lets it win): the heartbeats that come meanwhile wait for the turn or are refused, whatever the timing.
      const winAlarmRaces = await loseAlarmRaces(h, dialect, org.id)
      const ok = heartbeat([{ controllerId: controller.id, communication: 'ok' }])
      const held = as('PUT', STATUS, ok)
      while (!h.logs().some((l) => l.msg === 'alarm write retried after a concurrent change')) await sleep(5)
      let settled = 0
      const flood = Array.from({ length: 30 }, () => as('PUT', STATUS, ok).finally(() => (settled += 1)))
      // The two that find room wait for the held turn; the others are answered at once (unbounded, none would be).
      const deadline = Date.now() + 10_000
      while (settled < 28 && Date.now() < deadline) await sleep(5)
      await winAlarmRaces()
      const answers = await Promise.all(flood)
      assert.equal((await held).statusCode, 200)
      const busy = answers.filter((a) => a.statusCode === 503)
      assert.deepEqual([answers.length - busy.length, busy.length], [2, 28], answers.map((a) => a.statusCode).join(' '))
      for (const a of answers.filter((a) => a.statusCode !== 503)) assert.equal(a.statusCode, 200, a.body)
      for (const a of busy)
        assert.deepEqual([a.json().code, a.json().setting, a.headers['retry-after']], ['ServiceUnavailable', 'SITEGRID_EDGE_STATUS_QUEUE_MAX', '1'], a.body)
      assert.deepEqual(
        (await commAlarms(as)).map((a) => a.isActive),
        [false],
        'the held heartbeat cleared the alarm',
      )
    })

    it("another organisation's gateway and a key restricted to another site read as the uniform 404", async (t) => {
      const { h, org, as, a } = await gateways(t, dialect)
      await as('PUT', STATUS, heartbeat([{ controllerId: a, communication: 'ok' }]))
      const { org: stranger, key } = await h.orgWithKey('admin')
      const foreign = await h.inject({ org: stranger, apiKey: key }, { url: STATUS })
      assert.equal(foreign.statusCode, 404)
      assert.equal(foreign.json().code, 'NotFound')
      assert.equal((await as('POST', '/api/sites', { code: 'S2', name: 'Other' })).statusCode, 201)
      const minted = await as('POST', '/api/admin/api-keys', {
        role: 'member',
        name: 'GW-1',
        expiresAt: new Date(h.clock.now() + 86_400_000).toISOString(),
        siteId: 'S2',
      })
      const gateway = { org, apiKey: minted.json().plaintext as string }
      const elsewhere = await h.inject(gateway, { method: 'PUT', url: STATUS, payload: heartbeat([{ controllerId: a, communication: 'failed' }]) })
      assert.equal(elsewhere.statusCode, 404)
      assert.equal(elsewhere.json().code, 'NotFound')
      assert.equal((await commAlarms(as)).length, 0, 'nothing raised')
    })
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: edge stale sweep job`, () => {
    it("the sweep raises COMM_LOSS for each organisation's controllers gone stale without any read of their status, once", async (t) => {
      const first = await gateways(t, dialect)
      const { h } = first
      const { org, key } = await h.orgWithKey('admin')
      const second = { org, as: ((method, url, payload) => h.inject({ org, apiKey: key }, { method: method as 'GET', url, payload: payload as object })) as As }
      assert.equal((await second.as('POST', '/api/sites', { code: 'S1', name: 'Plant' })).statusCode, 201)
      const other = await createController(second.as)
      await second.as('POST', `/api/sites/S1/controllers/${other.id}/assign`, { edgeId: 'GW-1' })
      await first.as('PUT', STATUS, heartbeat([{ controllerId: first.a, communication: 'ok' }]))
      await second.as('PUT', STATUS, heartbeat([{ controllerId: other.id, communication: 'ok' }]))
      const { sites, controllers, instances } = createSiteServices({ config: h.config, handle: h.handle, clock: h.clock })
      const alarms = createAlarmsService({ handle: h.handle, clock: h.clock, sites, instances })
      const edges = createEdgesService({ handle: h.handle, clock: h.clock, sites, controllers, instances, alarms, staleAfterMs: STALE_MS })
      const orgs = [first.org.id, second.org.id]

      assert.deepEqual(await withSystemScope(() => edges.sweep({ orgs })), { orgs: 0, raised: 0 }, 'nothing stale yet')
      h.clock.advance(STALE_MS)
      assert.deepEqual(await withSystemScope(() => edges.sweep({ orgs })), { orgs: 2, raised: 2 })
      // Visited again (their reports are alarmed), nothing is sent: the controllers are still on their gateways.
      assert.deepEqual(await withSystemScope(() => edges.sweep({ orgs })), { orgs: 2, raised: 0 }, 'a second sweep finds them alarmed')
      for (const { as } of [first, second]) {
        const raised = await commAlarms(as)
        assert.equal(raised.length, 1)
        assert.equal(raised[0]!.isActive, true)
      }

      // A controller taken off its gateway while alarmed: the job clears its alarm without any read of the status.
      assert.equal((await second.as('POST', `/api/sites/S1/controllers/${other.id}/unassign`)).statusCode, 200)
      assert.deepEqual(await withSystemScope(() => edges.sweep({ orgs })), { orgs: 2, raised: 1 })
      assert.equal((await commAlarms(second.as))[0]!.isActive, false)
      assert.equal((await commAlarms(first.as))[0]!.isActive, true)
      assert.deepEqual(await withSystemScope(() => edges.sweep({ orgs })), { orgs: 1, raised: 0 })
    })
  })
}
