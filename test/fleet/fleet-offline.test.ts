// Issue 26, the fleet link at volume and after a long outage, with real processes: a cloud (`sitegrid serve` on
// PostgreSQL, the app role) and a SQLite site server linked through a loopback TCP proxy. The link is cut; the site
// imports 1 000 000 historian samples through its upload API and takes 10 000 alarm events in batches and a few edits;
// then both processes restart 30 days later (libfaketime moves their clocks; the databases keep theirs) and the link
// heals: everything arrives exactly once (counts and order-independent digests by SQL on both sides), the alarm reads
// answer the same on both sides, no reseed, no divergence, the link online; then a batch deleted on the site leaves
// the cloud with all its samples. Peak memory of both sides during the catch-up is printed (FLEET_OFFLINE_SAMPLES /
// FLEET_OFFLINE_EVENTS scale the case down for a quick run).
import assert from 'node:assert/strict'
import { existsSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { systemClock } from '../../src/clock.ts'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts'
import { CLI_ACTOR } from '../../src/identity.ts'
import { createApiKeysService } from '../../src/modules/api-keys/service.ts'
import { startServer, type Server } from '../cli/process.ts'
import { KEY_SECRET, sleep } from '../harness.ts'
import { countFromEnv, processWorld } from '../hardening/process-support.ts'
import { caller, FAST_LINK, FLEET_HOST, FLEET_SLUG, items, memoryOf, startSite, until, type Call } from '../support/fleet-processes.ts'
import { serverBundle } from '../support/server-bundle.ts'

const SAMPLES = countFromEnv('FLEET_OFFLINE_SAMPLES', 1_000_000)
const EVENTS = countFromEnv('FLEET_OFFLINE_EVENTS', 10_000)
const SAMPLES_PER_UPLOAD = 250_000
const EVENTS_PER_POST = 1000
const TAGS = 100
const INSTANCES = 10
const SITE = 'PIT'
const OUTAGE_DAYS = 30
const DAY_MS = 86_400_000

/**
 * The environment that runs a process `days` ahead (libfaketime preloaded, as `faketime -f +Nd` sets it; monotonic time
 * real). The library is preloaded directly: Debian's `faketime` wrapper refuses to start ("sem_open: File exists") when a
 * semaphore named after its process id is already in /dev/shm, as one left by a killed process under libfaketime is.
 */
function faketimeEnv(days: number): Record<string, string> {
  const triplet = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' }[process.arch as string] ?? ''
  const libraries = [`/usr/lib/${triplet}/faketime`, '/usr/lib64/faketime', '/usr/lib/faketime', '/usr/local/lib/faketime']
  const library = libraries.map((dir) => `${dir}/libfaketime.so.1`).find((file) => existsSync(file))
  assert.ok(library, `libfaketime (Debian package faketime) must be installed: none of ${libraries.join(', ')} holds it`)
  return { LD_PRELOAD: library, FAKETIME: `+${days}d`, FAKETIME_DONT_FAKE_MONOTONIC: '1' }
}

/** A `long` trend CSV upload of `rows` samples (TAGS tags over INSTANCES instances, one sample per tag per second). */
function upload(url: string, apiKey: string, rows: number, startMs: number): Promise<{ status: number; body: string }> {
  const boundary = 'fleetofflineboundary'
  const mapping = `historian_tag,instance_id,tag_key\n${Array.from({ length: TAGS }, (_, i) => `T${i},PUMP-${i % INSTANCES},tag_${i}`).join('\n')}\n`
  const field = (name: string, value: string) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
  const file = (name: string) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"; filename="${name}.csv"\r\ncontent-type: text/csv\r\n\r\n`
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/historian/import-batches`, {
      method: 'POST',
      headers: { host: FLEET_HOST, 'x-api-key': apiKey, 'content-type': `multipart/form-data; boundary=${boundary}` },
    })
    req.on('error', reject)
    req.on('response', (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.write(`${field('site_id', SITE)}${field('format', 'long')}${file('mapping_csv')}${mapping}\r\n${file('trend_csv')}timestamp,tag,value\n`)
    // Written in slices of 10 000 lines (the whole CSV is never one string).
    for (let from = 0; from < rows; from += 10_000) {
      let lines = ''
      for (let i = from; i < Math.min(rows, from + 10_000); i++) {
        lines += `${new Date(startMs + Math.floor(i / TAGS) * 1000).toISOString()},T${i % TAGS},${((i * 7919) % 100_000) / 100}\n`
      }
      req.write(lines)
    }
    req.end(`\r\n--${boundary}--\r\n`)
  })
}

/** Samples, as an order-independent digest per series (the series ids differ per side): count, Σts, Σround(100·value). */
async function sampleDigest(h: DatabaseHandle, orgId: string) {
  const { rows } = await sql<{ instance_id: string; tag_key: string; n: unknown; ts: unknown; v: unknown; lo: unknown; hi: unknown }>`
    select s.instance_id, s.tag_key, count(*) as n, sum(p.ts) as ts, sum(cast(round(p.value * 100) as bigint)) as v, min(p.ts) as lo, max(p.ts) as hi
    from historian_points p join historian_series s on s.org_id = p.org_id and s.id = p.series_id
    where p.org_id = ${orgId} group by s.instance_id, s.tag_key order by s.instance_id, s.tag_key`.execute(h.db)
  return rows.map((r) => [r.instance_id, r.tag_key, Number(r.n), String(r.ts), String(r.v), Number(r.lo), Number(r.hi)].join(' '))
}

const countOf = async (h: DatabaseHandle, table: 'historian_points' | 'alarm_events' | 'alarm_history', orgId: string) =>
  Number((await sql<{ n: unknown }>`select count(*) as n from ${sql.table(table)} where org_id = ${orgId}`.execute(h.db)).rows[0]!.n)

const eventIds = async (h: DatabaseHandle, orgId: string) =>
  (await sql<{ event_id: string }>`select event_id from alarm_events where org_id = ${orgId} order by event_id`.execute(h.db)).rows.map((r) => r.event_id)

const batchesOf = async (h: DatabaseHandle, orgId: string) =>
  (
    await sql<{ id: string; status: string; samples_stored: unknown }>`select id, status, samples_stored from historian_batches
      where org_id = ${orgId} order by id`.execute(h.db)
  ).rows.map((r) => `${r.id} ${r.status} ${Number(r.samples_stored)}`)

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`

describe('fleet link, real processes: 1 000 000 samples and 10 000 alarm events made offline, a 30-day outage (issue 26)', () => {
  it('all arrive exactly once after the outage, without a reseed; the alarm reads agree on both sides', async (t) => {
    const phases: string[] = []
    let phaseStart = performance.now()
    t.after(() => t.diagnostic(`phases: ${phases.join(', ')}`))
    const phase = (name: string) => {
      const now = performance.now()
      phases.push(`${name} ${((now - phaseStart) / 1000).toFixed(1)} s`)
      phaseStart = now
    }
    const [world, bundle] = await Promise.all([processWorld(t, 'postgres', FLEET_SLUG, { SITEGRID_MODE: 'cloud', ...FAST_LINK }), serverBundle()])
    // The owner's key outlives the outage (processWorld's lasts a day).
    const keys = createApiKeysService({ handle: world.handle, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') })
    const ownerKey = await keys.mint(world.orgId, CLI_ACTOR, { role: 'owner', name: 'outage', expiresAt: new Date(Date.now() + 90 * DAY_MS).toISOString() })
    let cloud: Server = await startServer({ cwd: world.cwd, env: world.env, bundle })
    t.after(() => cloud.stop('SIGKILL'))
    const owner = caller(() => cloud, { 'x-api-key': ownerKey.plaintext })
    assert.equal((await owner('POST', '/api/sites', { code: SITE, name: 'Remote pit', timeZone: 'UTC' })).status, 201)
    const plc = await owner('POST', `/api/sites/${SITE}/controllers`, {
      name: 'PLC 1',
      platform: 1,
      assetNumber: 'A-1',
      connection: { protocol: 'EtherNet/IP', ipAddress: '10.20.1.15' },
    })
    assert.equal(plc.status, 201, plc.body)
    const plcId = (plc.json() as { id: string }).id
    for (let i = 0; i < INSTANCES; i++) {
      const res = await owner('POST', `/api/sites/${SITE}/instances`, {
        id: `PUMP-${i}`,
        name: `Pump ${i}`,
        typeId: 'pump',
        assetNumber: `P-${i}`,
        controllerId: plcId,
      })
      assert.equal(res.status, 201, res.body)
    }
    const site = await startSite(t, bundle, cloud, owner, 'pit', [SITE], { keyLifetime: '90d' })
    const linkState = async (call: Call) => {
      const res = await call('GET', '/api/link')
      assert.equal(res.status, 200, res.body)
      return res.json() as { state: string; lastError: string | null; up: { items: number } }
    }
    await until(
      'the site server online',
      () => linkState(site.call),
      (s) => s.state === 'online',
    )
    const reads = [`/api/sites/${SITE}`, `/api/sites/${SITE}/controllers`, `/api/sites/${SITE}/instances`]
    /** Waits until every read answers the same on both sides; on failure names the first that differs and where. */
    const sameOnBoth = async (what: string, urls: string[], seconds = 60) => {
      let differ = ''
      for (let i = 0; i < seconds * 10; i++) {
        differ = ''
        for (const url of urls) {
          const [a, b] = [await owner('GET', url), await site.call('GET', url)]
          assert.equal(a.status, 200, `${url}: ${a.body}`)
          assert.equal(b.status, 200, `${url}: ${b.body}`)
          // The cloud's read of an alarm also counts the actions forwarded to the site server (documented, cloud only).
          const cloudBody = a.body.replace(/,"pendingCommands":0}$/, '}')
          if (cloudBody !== b.body) {
            let at = 0
            while (cloudBody[at] === b.body[at]) at++
            differ = `${url} at ${at}: cloud …${cloudBody.slice(Math.max(0, at - 300), at + 300)}… site …${b.body.slice(Math.max(0, at - 300), at + 300)}…`
            break
          }
        }
        if (differ === '') return
        await sleep(100)
      }
      assert.fail(`${what}: not the same on both sides in ${seconds} s: ${differ}`)
    }
    await sameOnBoth('seeded', reads)
    const siteDb = await connectDatabase(site.env.DATABASE_URL, { poolSize: 1 })
    t.after(() => siteDb.close())
    const peerBefore = await siteDb.db.selectFrom('link_peer').select(['epoch', 'server_id']).executeTakeFirstOrThrow()
    phase('set-up')

    // 1. The link cut; the site keeps working: 1 000 000 samples uploaded, 10 000 alarm events, a few edits.
    site.proxy.cut()
    const started = Date.UTC(2026, 9, 1)
    for (let done = 0, n = 0; done < SAMPLES; n++) {
      const rows = Math.min(SAMPLES_PER_UPLOAD, SAMPLES - done)
      const res = await upload(site.server.url, site.apiKey, rows, started + n * 10 * DAY_MS)
      assert.equal(res.status, 201, res.body.slice(0, 1000))
      assert.equal((JSON.parse(res.body) as { status: string }).status, 'complete', res.body.slice(0, 1000))
      done += rows
    }
    phase(`${SAMPLES} samples uploaded offline`)
    const eventAt = Date.now() - 3_600_000
    for (let i = 0; i < EVENTS; i += EVENTS_PER_POST) {
      const events = Array.from({ length: Math.min(EVENTS_PER_POST, EVENTS - i) }, (_, j) => ({
        eventId: `off-${String(i + j).padStart(6, '0')}`,
        instanceId: `PUMP-${(i + j) % INSTANCES}`,
        condition: ['HI', 'LO', 'HIHI', 'LOLO'][Math.floor((i + j) / INSTANCES) % 4],
        priority: 'high',
        state: (i + j) % 3 === 2 ? 'normal' : 'active',
        occurredAt: new Date(eventAt + i + j).toISOString(),
      }))
      const res = await site.call('POST', `/api/sites/${SITE}/alarms/events`, { events })
      assert.equal(res.status, 200, res.body.slice(0, 1000))
    }
    phase(`${EVENTS} alarm events posted offline`)
    assert.equal((await site.call('PUT', `/api/sites/${SITE}/instances/PUMP-1`, { name: 'Pump 1, fixed on site' })).status, 200)
    const fixed = await site.call('PUT', `/api/sites/${SITE}/controllers/${plcId}`, { connection: { protocol: 'EtherNet/IP', ipAddress: '10.20.1.99' } })
    assert.equal(fixed.status, 200, fixed.body)
    const alarms = (await items(site.call, `/api/sites/${SITE}/alarms?limit=1000`)) as Array<{ alarmId: string; state: string }>
    const [shelved, acknowledged] = alarms.filter((a) => a.state !== 'normal')
    assert.ok(shelved && acknowledged, JSON.stringify(alarms).slice(0, 500))
    const shelve = await site.call('POST', `/api/sites/${SITE}/alarms/${shelved.alarmId}/shelve`, {
      comment: 'shelved for the night',
      until: new Date(Date.now() + 8 * 3_600_000).toISOString(),
    })
    assert.equal(shelve.status, 200, shelve.body)
    assert.equal((await site.call('POST', `/api/sites/${SITE}/alarms/${acknowledged.alarmId}/acknowledge`, { comment: 'seen on site' })).status, 200)

    const orgId = world.orgId
    assert.equal(await countOf(siteDb, 'historian_points', orgId), SAMPLES)
    assert.equal(await countOf(siteDb, 'alarm_events', orgId), EVENTS)
    assert.equal(await countOf(world.handle, 'historian_points', orgId), 0, 'nothing crossed the cut link')

    // 2. Thirty days later: both processes restart with their clocks 30 days ahead (the databases keep theirs: SQLite
    // reads the site process's clock, PostgreSQL its own). The shelve has run out on the site; more events come in.
    await site.server.stop()
    const cloudPort = cloud.port
    await cloud.stop()
    const later = faketimeEnv(OUTAGE_DAYS)
    cloud = await startServer({ cwd: world.cwd, env: { ...world.env, ...later }, bundle, port: cloudPort })
    site.server = await startServer({ cwd: site.cwd, env: { ...site.env, ...later }, bundle })
    // libfaketime makes a semaphore and a shared memory object named after each process and removes them when it
    // exits; a process killed leaves them in /dev/shm, so they are removed here once the processes are gone.
    const faked = [cloud, site.server]
    t.after(async () => {
      for (const server of faked) {
        await server.stop('SIGKILL')
        for (const name of [`sem.faketime_sem_${server.child.pid}`, `faketime_shm_${server.child.pid}`]) rmSync(`/dev/shm/${name}`, { force: true })
      }
    })
    const afterShelve = (await site.call('GET', `/api/sites/${SITE}/alarms/${shelved.alarmId}`)).json() as { state: string }
    assert.notEqual(afterShelve.state, 'shelved', 'the 8-hour shelve ran out during the 30 days')
    const lateEvents = Array.from({ length: 10 }, (_, j) => ({
      eventId: `late-${j}`,
      instanceId: `PUMP-${j % INSTANCES}`,
      condition: 'HI',
      priority: 'low',
      state: j % 2 === 0 ? 'normal' : 'active',
      occurredAt: new Date(Date.now() + OUTAGE_DAYS * DAY_MS + j).toISOString(),
    }))
    const late = await site.call('POST', `/api/sites/${SITE}/alarms/events`, { events: lateEvents })
    assert.equal(late.status, 200, late.body)
    const siteEvents = EVENTS + lateEvents.length
    // Before the heal both sides see the outage: the site its backlog waiting, the cloud a server not heard of for 30 days.
    const waiting = await until(
      'the site server offline',
      () => linkState(site.call),
      (s) => s.state === 'offline',
    )
    assert.ok(waiting.up.items > EVENTS, `the backlog waits on the site: ${JSON.stringify(waiting.up)}`)
    const unheard = await owner('GET', `/api/admin/site-servers/${site.serverId}`)
    assert.equal((unheard.json() as { connection: string }).connection, 'offline', unheard.body)
    phase('restarted 30 days later')

    // 3. The link heals: the catch-up, its memory sampled on both sides.
    const pids = { site: site.server.child.pid!, cloud: cloud.child.pid! }
    const atHeal = { site: memoryOf(pids.site), cloud: memoryOf(pids.cloud) }
    const peak = { site: atHeal.site.rss, cloud: atHeal.cloud.rss }
    const peakAnon = { site: atHeal.site.anon, cloud: atHeal.cloud.anon }
    const sampler = setInterval(() => {
      for (const side of ['site', 'cloud'] as const) {
        try {
          const now = memoryOf(pids[side])
          peak[side] = Math.max(peak[side], now.rss)
          peakAnon[side] = Math.max(peakAnon[side], now.anon)
        } catch {
          // gone: its peak so far stands
        }
      }
    }, 50)
    t.after(() => clearInterval(sampler))
    site.proxy.heal()
    await until(
      'every sample and event in the cloud',
      async () => [await countOf(world.handle, 'historian_points', orgId), await countOf(world.handle, 'alarm_events', orgId)],
      ([samples, events]) => samples! >= SAMPLES && events! >= siteEvents,
      600,
    )
    clearInterval(sampler)
    const final = { site: memoryOf(pids.site), cloud: memoryOf(pids.cloud) }
    phase('catch-up')
    const figures = (side: 'site' | 'cloud') =>
      `${mib(Math.max(peak[side], final[side].rss))} (VmHWM ${mib(final[side].peak)}; at the heal ${mib(atHeal[side].rss)}, ` +
      `+${mib(peak[side] - atHeal[side].rss)}; at the end ${mib(final[side].rss)}; anonymous memory +${mib(peakAnon[side] - atHeal[side].anon)})`
    t.diagnostic(`peak RSS during catch-up: site server ${figures('site')}, cloud ${figures('cloud')}`)

    // 4. Exactly once, and the same on both sides.
    await until(
      'the site has sent everything',
      () => linkState(site.call),
      (s) => s.up.items === 0 && s.state === 'online',
    )
    await sleep(1000) // a resend would add nothing; a duplicate would show in the counts below
    assert.equal(await countOf(world.handle, 'historian_points', orgId), SAMPLES)
    assert.equal(await countOf(world.handle, 'alarm_events', orgId), siteEvents)
    assert.deepEqual(await sampleDigest(world.handle, orgId), await sampleDigest(siteDb, orgId))
    assert.equal((await sampleDigest(siteDb, orgId)).length, TAGS)
    assert.deepEqual(await batchesOf(world.handle, orgId), await batchesOf(siteDb, orgId))
    assert.deepEqual(await eventIds(world.handle, orgId), await eventIds(siteDb, orgId))
    assert.equal(await countOf(world.handle, 'alarm_history', orgId), await countOf(siteDb, 'alarm_history', orgId))
    const alarmReads = [
      `/api/sites/${SITE}/alarms?limit=1000`,
      ...alarms.map((a) => `/api/sites/${SITE}/alarms/${a.alarmId}`),
      `/api/sites/${SITE}/instances/PUMP-1`,
      `/api/sites/${SITE}/controllers`,
    ]
    await sameOnBoth('the alarm reads and the edits after the heal', alarmReads)

    // No reseed, no divergence: the same epoch and server, the link online on both sides, no error.
    const peerAfter = await siteDb.db.selectFrom('link_peer').select(['epoch', 'server_id', 'last_error']).executeTakeFirstOrThrow()
    assert.deepEqual({ epoch: peerAfter.epoch, server_id: peerAfter.server_id }, peerBefore, 'no reseed (the epoch is the one of the enrolment)')
    const status = await linkState(site.call)
    assert.equal(status.state, 'online')
    assert.equal(status.lastError, null)
    const seen = await owner('GET', `/api/admin/site-servers/${site.serverId}`)
    assert.equal(seen.status, 200, seen.body)
    const view = seen.json() as { connection: string; lastError: string | null; status: string }
    assert.deepEqual(
      { connection: view.connection, lastError: view.lastError, status: view.status },
      { connection: 'online', lastError: null, status: 'enrolled' },
    )
    phase('compared')

    // 5. A batch deleted on the site goes in the cloud too, every sample of it (its tombstone takes them along).
    const [deleted, samplesOfDeleted] = (await batchesOf(siteDb, orgId))[0]!.split(' ').filter((_, i) => i !== 1)
    const removed = await site.call('DELETE', `/api/historian/import-batches/${deleted}`)
    assert.equal(removed.status, 204, removed.body)
    await until(
      'the deleted batch gone from the cloud',
      () => countOf(world.handle, 'historian_points', orgId),
      (n) => n === SAMPLES - Number(samplesOfDeleted),
      120,
    )
    assert.deepEqual(await batchesOf(world.handle, orgId), await batchesOf(siteDb, orgId))
    assert.deepEqual(await sampleDigest(world.handle, orgId), await sampleDigest(siteDb, orgId))
    phase('a batch deleted')
  })
})
