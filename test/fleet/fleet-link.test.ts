// Issue 26, the fleet link with real processes: a cloud cell of two `sitegrid serve` processes on PostgreSQL (the app
// role, row-level security) and two site servers on SQLite, each linked through a loopback TCP proxy the test cuts.
// One large case (CI time): seeding, edits on both sides during a cut settled by the rule, SIGKILL of either side in
// the middle of a sync ten times, bad input on the link endpoints, and every read compared on both sides.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { connectDatabase } from '../../src/db/connect.ts'
import { unsealLinkCredential } from '../../src/modules/fleet/enrolment/service.ts'
import { LINK_PROTOCOL, SCHEMA_VERSION } from '../../src/modules/fleet/site-servers/protocol.ts'
import { startServer, type Server } from '../cli/process.ts'
import { KEY_SECRET, sleep } from '../harness.ts'
import { processWorld, seededRandom, seedFromEnv } from '../hardening/process-support.ts'
import { serverBundle } from '../support/server-bundle.ts'
import { caller, type Call, FAST_LINK, FLEET_SLUG, items, type SiteServer, startSite, until } from '../support/fleet-processes.ts'

const SLUG = FLEET_SLUG

describe('fleet link, real processes: a cloud cell of two processes on PostgreSQL, two site servers on SQLite (issue 26)', () => {
  it('converges after cuts, conflicting edits, deletions on both sides and ten SIGKILLs mid-sync; refuses bad link input', async (t) => {
    const seed = seedFromEnv('FLEET_SEED')
    t.diagnostic(`FLEET_SEED=${seed}`)
    const random = seededRandom(seed)
    const [world, bundle] = await Promise.all([processWorld(t, 'postgres', SLUG, { SITEGRID_MODE: 'cloud', ...FAST_LINK }), serverBundle()])
    const cloud: Server[] = await Promise.all([
      startServer({ cwd: world.cwd, env: world.env, bundle }),
      startServer({ cwd: world.cwd, env: world.env, bundle }),
    ])
    t.after(() => Promise.all(cloud.map((c) => c.stop('SIGKILL'))))
    const owner = caller(() => cloud[1]!, { 'x-api-key': world.ownerKey }) // the other process than the sites' links
    for (const code of ['S1', 'S2']) {
      assert.equal((await owner('POST', '/api/sites', { code, name: `Plant ${code}` })).status, 201)
      const plc = await owner('POST', `/api/sites/${code}/controllers`, {
        name: `PLC ${code}`,
        platform: 1,
        assetNumber: `A-${code}`,
        connection: { protocol: 'EtherNet/IP', ipAddress: '10.20.1.15' },
      })
      assert.equal(plc.status, 201, plc.body)
      for (const id of ['CV-1', 'CV-2']) {
        const body = {
          id,
          name: `Conveyor ${id}`,
          typeId: 'conveyor',
          assetNumber: `${code}-${id}`,
          controllerId: (plc.json() as { id: string }).id,
          tagMappings: { running: 'B3:0', speed: 'N7:0' },
        }
        assert.equal((await owner('POST', `/api/sites/${code}/instances`, body)).status, 201)
      }
    }
    // A tag marked discrete in the cloud before the sites enrol: it arrives with the seed.
    assert.equal((await owner('PUT', '/api/sites/S1/historian/tags/CV-1/running', { interpolation: 'step' })).status, 200)
    // Each site server talks to cloud process 0 through its own proxy.
    const sites = [await startSite(t, bundle, cloud[0]!, owner, 'pit-1', ['S1']), await startSite(t, bundle, cloud[0]!, owner, 'pit-2', ['S2'])]
    const reads = (code: string) => [
      `/api/sites/${code}`,
      `/api/sites/${code}/controllers`,
      `/api/sites/${code}/instances`,
      `/api/sites/${code}/alarms?limit=200`,
      `/api/sites/${code}/electrical/nodes`,
      `/api/sites/${code}/historian/tags`,
    ]
    const read = async (call: Call, url: string) => {
      const res = await call('GET', url)
      assert.equal(res.status, 200, `${url}: ${res.body}`)
      return res.body
    }
    const converged = async (what: string) => {
      for (const [i, site] of sites.entries()) {
        const code = `S${i + 1}`
        await until(
          `${what}: ${code}`,
          async () => Promise.all(reads(code).map(async (url) => [await read(owner, url), await read(site.call, url)])),
          (pairs) => pairs.every(([a, b]) => a === b),
        )
      }
    }
    await converged('seeded')

    // 1. A cut: edits on both sides, a conflicting one, deletions on both sides, alarms on the sites.
    const [plc1] = (await items(owner, '/api/sites/S1/controllers')) as Array<{ id: string }>
    for (const s of sites) s.proxy.cut()
    assert.equal((await owner('PUT', `/api/sites/S1/controllers/${plc1!.id}`, { name: 'renamed in the cloud' })).status, 200)
    assert.equal((await sites[0]!.call('PUT', `/api/sites/S1/controllers/${plc1!.id}`, { name: 'renamed on site' })).status, 200)
    assert.equal((await owner('DELETE', '/api/sites/S1/instances/CV-2')).status, 204)
    assert.equal((await sites[1]!.call('DELETE', '/api/sites/S2/instances/CV-2')).status, 204)
    assert.equal((await sites[1]!.call('PUT', '/api/sites/S2/instances/CV-1', { name: 'renamed on site 2' })).status, 200)
    let events = 0
    const post = async (site: SiteServer, code: string, n: number) => {
      const batch = Array.from({ length: n }, () => {
        events++
        return {
          eventId: `ev-${code}-${events}`,
          instanceId: 'CV-1',
          condition: random() < 0.5 ? 'HI' : 'LO',
          priority: 'high',
          state: random() < 0.7 ? 'active' : 'normal',
          occurredAt: new Date(Date.UTC(2026, 10, 1) + events * 1000).toISOString(),
        }
      })
      const res = await site.call('POST', `/api/sites/${code}/alarms/events`, { events: batch })
      assert.equal(res.status, 200, res.body)
    }
    // Tag marks (issue 30): the cloud deletes one (a tombstone down) and sets another; a site sets one offline (up).
    assert.equal((await owner('DELETE', '/api/sites/S1/historian/tags/CV-1/running')).status, 204)
    assert.equal((await owner('PUT', '/api/sites/S1/historian/tags/CV-1/speed', { interpolation: 'step' })).status, 200)
    assert.equal((await sites[1]!.call('PUT', '/api/sites/S2/historian/tags/CV-1/running', { interpolation: 'step' })).status, 200)
    await post(sites[0]!, 'S1', 100)
    await post(sites[1]!, 'S2', 100)
    for (const s of sites) s.proxy.heal()
    await converged('after the cut')
    const marks = async (call: Call, code: string) =>
      ((await items(call, `/api/sites/${code}/historian/tags`)) as Array<{ instanceId: string; tag: string; interpolation: string }>).map(
        (m) => `${m.instanceId}/${m.tag}=${m.interpolation}`,
      )
    assert.deepEqual(await marks(sites[0]!.call, 'S1'), ['CV-1/speed=step'], "the cloud's mark and tombstone reached site 1")
    assert.deepEqual(await marks(owner, 'S2'), ['CV-1/running=step'], "site 2's offline mark reached the cloud")
    const [settled] = (await items(owner, '/api/sites/S1/controllers')) as Array<{ name: string }>
    assert.equal(settled!.name, 'renamed in the cloud', 'the cloud wins')
    const conflicts = (await items(owner, '/api/link/conflicts')) as Array<{ table: string; serverId: string }>
    assert.deepEqual(
      conflicts.map((c) => [c.table, c.serverId]),
      [['controllers', sites[0]!.serverId]],
    )

    // 2. SIGKILL in the middle of a sync, ten times, alternating a site server and the cloud process it talks to.
    for (let round = 0; round < 10; round++) {
      const siteIndex = round % 2
      const site = sites[siteIndex]!
      const code = `S${siteIndex + 1}`
      await post(site, code, 50)
      await sleep(Math.floor(random() * 60))
      if (round % 4 < 2) {
        site.server.child.kill('SIGKILL')
        await site.server.stop()
        site.server = await startServer({ cwd: site.cwd, env: site.env, bundle })
      } else {
        const port = cloud[0]!.port
        cloud[0]!.child.kill('SIGKILL')
        await cloud[0]!.stop()
        cloud[0] = await startServer({ cwd: world.cwd, env: world.env, bundle, port })
      }
    }
    await converged('after ten SIGKILLs')
    const count = async (table: 'alarm_events' | 'alarm_history', dbUrl: string) => {
      const h = await connectDatabase(dbUrl, { poolSize: 1 })
      try {
        const row = await h.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirst()
        return Number(row?.n ?? 0)
      } finally {
        await h.close()
      }
    }
    const siteEvents = (await count('alarm_events', sites[0]!.env.DATABASE_URL)) + (await count('alarm_events', sites[1]!.env.DATABASE_URL))
    assert.equal(siteEvents, events)
    assert.equal(await count('alarm_events', world.databaseUrl), events, 'every event once in the cloud')
    assert.equal(
      await count('alarm_history', world.databaseUrl),
      (await count('alarm_history', sites[0]!.env.DATABASE_URL)) + (await count('alarm_history', sites[1]!.env.DATABASE_URL)),
    )

    // 3. Bad input on the link: nothing changes, a clear 4xx.
    const siteDb = await connectDatabase(sites[0]!.env.DATABASE_URL, { poolSize: 1 })
    const peer = await siteDb.db.selectFrom('link_peer').selectAll().executeTakeFirstOrThrow()
    await siteDb.close()
    const credential = unsealLinkCredential(Buffer.from(KEY_SECRET, 'base64'), peer)!
    const link = caller(() => cloud[0]!, {
      authorization: `Bearer ${credential}`,
      'sitegrid-link-protocol': String(LINK_PROTOCOL),
      'sitegrid-schema': SCHEMA_VERSION,
    })
    const before = await count('alarm_events', world.databaseUrl)
    const acked = { tx: Number(peer.acked_tx), seq: Number(peer.acked_seq) }
    const change = {
      seq: 999_999,
      tx: 0,
      table: 'alarm_events',
      site: 'S2',
      key: ['S2', 'forged'],
      op: 'upsert',
      row: {},
      base: null,
      origin: '',
      at: 1,
    }
    const answers = [
      await link('POST', '/api/link/push', '{"epoch":"x","after":1,"changes":[{"seq":'), // truncated
      await link('POST', '/api/link/push', { epoch: peer.epoch, after: acked, changes: [change] }), // another site's
      await link('POST', '/api/link/push', { epoch: peer.epoch, after: { ...acked, seq: acked.seq + 10 }, changes: [] }), // reordered: ahead of the mark
      await link('POST', '/api/link/push', { epoch: peer.epoch, after: { tx: 0, seq: 0 }, changes: [] }, { 'sitegrid-schema': '0001-foundation' }), // version skew
      await caller(() => cloud[0]!, { authorization: 'Bearer slk_srv_00000000000000000000000000_00000000000000000000000000000000' })('GET', '/api/link/pull'),
    ]
    assert.deepEqual(
      answers.map((a) => [a.status, (a.json() as { code: string }).code]),
      [
        [400, 'MalformedBody'],
        [422, 'LinkChangeRefused'],
        [409, 'LinkDiverged'],
        [409, 'LinkVersionMismatch'],
        [401, 'Unauthorized'],
      ],
    )
    assert.equal(await count('alarm_events', world.databaseUrl), before)
    await converged('after the refused input')
  })
})
