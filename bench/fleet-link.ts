// Issue 26, the fleet link's figures. Each side is its own process (`bin/sitegrid serve`): a cloud cell
// (SITEGRID_MODE=cloud, on each dialect of the run) and a site server (SITEGRID_MODE=site, SQLite) enrolled to it with
// `sitegrid link enrol`, its agent on the link's default timings, through a loopback TCP proxy in the bench process
// that cuts and heals the link (test/support/tcp-proxy.ts). Per run, on a fresh pair:
//   1. latency, link up: BENCH_LINK_LATENCY_EVENTS (200) alarm events posted one at a time on the site with random
//      gaps of 20–120 ms, each timed from the request's start until its row is in the cloud's database (polled every
//      5 ms); p50 and p99. Baseline: the round trip of one GET /healthz to the cloud through the same proxy.
//   2. catch-up after an outage: the link cut, the site imports BENCH_LINK_SAMPLES (1 000 000) historian samples through
//      its import API (`long` CSV uploads of at most 250 000 samples each, 100 tags mapped to the site's instances)
//      and takes BENCH_LINK_EVENTS (10 000) alarm events through its API in batches of 1000; then the link heals and
//      the time until the cloud's database holds every sample and every event exactly once (counts equal to the
//      site's, polled every 200 ms) is measured, from the agent's first new connection after the heal (the agent's
//      backoff, up to 60 s by default, is not the link's speed; the time from the heal is printed too).
//      Baseline: the manual path, a tenant export of the site server's organisation (createTenantTransferService,
//      as bench/tenant-transfer.ts, in the bench process, both servers stopped) and its import (stage + apply) into a
//      fresh cloud database. Printed as a speed ratio (export + import) / catch-up: ≥ 1.00x = the link is not slower.
//   3. memory during catch-up: peak VmRSS growth of each server process over its VmRSS at the heal, from
//      /proc/<pid>/status sampled every 20 ms.
// Each figure is measured BENCH_RUNS (3) times and the median printed with the spread (min–max) and the 1-minute
// load (bench/run.ts waits for a quiet machine first).
// Full run: BENCH_ONLY=fleet-link npm run bench (BENCH_DIALECTS=postgres,sqlite picks the cloud's dialects).
import { randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { sql } from 'kysely'
import { systemClock } from '../src/clock.ts'
import { connectDatabase, type DatabaseHandle } from '../src/db/connect.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { CLI_ACTOR, type Org } from '../src/identity.ts'
import type { OrgId } from '../src/ids.ts'
import { createApiKeysService } from '../src/modules/api-keys/service.ts'
import { historianStoredParts } from '../src/modules/historian/transfer.ts'
import { createOrgsService } from '../src/modules/orgs/service.ts'
import { createSitesService } from '../src/modules/sites/service.ts'
import { createTenantTransferService } from '../src/modules/tenant-transfer/service.ts'
import { httpRequest, runCliAsync, startServer, type Server } from '../test/cli/process.ts'
import { startTcpProxy, type TcpProxy } from '../test/support/tcp-proxy.ts'
import { BENCH_RUNS, loadNow, median, medianWithSpread, percentile } from './lib.ts'

const SAMPLES = Number(process.env.BENCH_LINK_SAMPLES ?? 1_000_000)
const EVENTS = Number(process.env.BENCH_LINK_EVENTS ?? 10_000)
const LATENCY_EVENTS = Number(process.env.BENCH_LINK_LATENCY_EVENTS ?? 200)
const SAMPLES_PER_UPLOAD = 250_000
const TAGS = 100
const INSTANCES = 10
const SITE = 'BENCH'
const CATCH_UP_LIMIT_MS = 60 * 60_000

/** Server processes running now, stopped if the bench fails half-way (so none outlives it). */
const live = new Set<Server>()

async function serve(s: Side): Promise<Server> {
  const server = await startServer({ cwd: s.cwd, env: s.env })
  live.add(server)
  return server
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Dialect {
  name: string
  fresh?: () => Promise<string>
}

interface Side {
  cwd: string
  url: string
  env: Record<string, string>
  handle: DatabaseHandle
  server?: Server
}

async function side(dialect: Dialect, mode: 'cloud' | 'site', keySecret: string): Promise<Side> {
  const cwd = mkdtempSync(join(tmpdir(), `sitegrid-bench-${mode}-`))
  const url = mode === 'cloud' && dialect.fresh ? await dialect.fresh() : `sqlite:${join(cwd, `${mode}.db`)}`
  const handle = await connectDatabase(url, { poolSize: 2 })
  await migrateToLatest(handle.db)
  return {
    cwd,
    url,
    handle,
    env: {
      DATABASE_URL: url,
      SITEGRID_MODE: mode,
      SITEGRID_KEY_SECRET: keySecret,
      SITEGRID_BASE_DOMAIN: 'localhost',
      SITEGRID_LOG_LEVEL: 'warn',
      SITEGRID_DATA_DIR: join(cwd, 'data'),
      SITEGRID_RATE_LIMIT_PER_MINUTE: '100000000',
      SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE: '100000000',
      SITEGRID_BODY_LIMIT_BYTES: String(100 * 1024 * 1024),
    },
  }
}

async function mintOwnerKey(s: Side, orgId: OrgId): Promise<string> {
  const keys = createApiKeysService({ handle: s.handle, clock: systemClock, keySecret: Buffer.from(s.env.SITEGRID_KEY_SECRET!, 'base64') })
  const minted = await keys.mint(orgId, CLI_ACTOR, { role: 'owner', name: 'bench', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })
  return minted.plaintext
}

/** An API call to one side's server as the organisation's owner (Host: {slug}.localhost); throws unless 2xx. */
function api(s: Side, slug: string, key: string) {
  return async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await httpRequest(`${s.server!.url}${path}`, {
      method,
      headers: { host: `${slug}.localhost`, 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': contentType }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    })
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 500)}`)
    return res
  }
}

const count = async (handle: DatabaseHandle, table: 'alarm_events' | 'historian_points', orgId: string): Promise<number> =>
  Number((await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where org_id = ${orgId}`.execute(handle.db)).rows[0]!.n)

/** VmRSS of a process, in bytes. */
function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!
  return Number(line.split(/\s+/)[1]) * 1024
}

/** Peak VmRSS growth of some processes over their VmRSS now, sampled every 20 ms until stop(). */
function rssWatch(pids: number[]) {
  const start = pids.map(rssOf)
  const peak = [...start]
  const sample = () => {
    pids.forEach((pid, i) => {
      try {
        peak[i] = Math.max(peak[i]!, rssOf(pid))
      } catch {
        // the process is gone; its peak so far stands
      }
    })
  }
  const timer = setInterval(sample, 20)
  return {
    stop: () => {
      sample()
      clearInterval(timer)
      return peak.map((p, i) => p - start[i]!)
    },
  }
}

/** A `long` CSV of `rows` samples (TAGS tags, one sample per tag per second from `startSecond`) in a multipart body. */
function historianUpload(rows: number, startSecond: number): { body: string; contentType: string } {
  const boundary = `bench${randomBytes(8).toString('hex')}`
  const base = Date.UTC(2024, 0, 1) + startSecond * 1000
  const lines: string[] = ['timestamp,tag,value']
  for (let i = 0; i < rows; i++) lines.push(`${new Date(base + Math.floor(i / TAGS) * 1000).toISOString()},T${i % TAGS},${((i * 7919) % 100_000) / 100}`)
  const mapping = `historian_tag,instance_id,tag_key\n${Array.from({ length: TAGS }, (_, i) => `T${i},PUMP-${i % INSTANCES},tag_${i}`).join('\n')}\n`
  const field = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
  const file = (name: string, content: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}.csv"\r\nContent-Type: text/csv\r\n\r\n${content}\r\n`
  return {
    body: `${field('site_id', SITE)}${field('format', 'long')}${file('mapping_csv', mapping)}${file('trend_csv', `${lines.join('\n')}\n`)}--${boundary}--\r\n`,
    contentType: `multipart/form-data; boundary=${boundary}`,
  }
}

const alarmEvent = (eventId: string, i: number, at: number) => ({
  eventId,
  instanceId: `PUMP-${i % INSTANCES}`,
  condition: ['HI', 'LO', 'HIHI', 'LOLO'][Math.floor(i / INSTANCES) % 4],
  priority: 'high',
  state: i % 3 === 2 ? 'normal' : 'active',
  occurredAt: new Date(at).toISOString(),
})

interface Pair {
  cloud: Side
  site: Side
  proxy: TcpProxy
  org: Org
  cloudCall: ReturnType<typeof api>
  siteCall: ReturnType<typeof api>
  cleanup: () => Promise<void>
}

/** A cloud cell with organisation, site, controller and instances; a site server enrolled to it through the proxy. */
async function pair(dialect: Dialect): Promise<Pair> {
  const keySecret = randomBytes(32).toString('base64')
  const cloud = await side(dialect, 'cloud', keySecret)
  const slug = `fleet-${randomBytes(3).toString('hex')}`
  const org = await createOrgsService({ handle: cloud.handle, clock: systemClock }).provision(slug)
  const cloudKey = await mintOwnerKey(cloud, org.id)
  cloud.server = await serve(cloud)
  const cloudCall = api(cloud, slug, cloudKey)
  await cloudCall('POST', '/api/sites', { code: SITE, name: 'Bench plant', timeZone: 'UTC' })
  const plc = (
    await cloudCall('POST', `/api/sites/${SITE}/controllers`, {
      name: 'PLC 1',
      platform: 1,
      assetNumber: 'A-1',
      connection: { protocol: 'EtherNet/IP', ipAddress: '10.20.1.15' },
    })
  ).json() as { id: string }
  for (let i = 0; i < INSTANCES; i++) {
    await cloudCall('POST', `/api/sites/${SITE}/instances`, { id: `PUMP-${i}`, name: `Pump ${i}`, typeId: 'pump', assetNumber: `P-${i}`, controllerId: plc.id })
  }
  const registered = await runCliAsync(['link', 'register', '--org', slug, '--name', 'bench site server', '--site', SITE], { cwd: cloud.cwd, env: cloud.env })
  if (registered.code !== 0) throw new Error(`link register: ${registered.stderr}`)
  const proxy = await startTcpProxy(cloud.server.port)

  const site = await side({ name: 'sqlite' }, 'site', keySecret)
  const enrolled = await runCliAsync(['link', 'enrol', '--cloud', `http://${slug}.localhost:${proxy.port}`, '--code', registered.stdout.trim()], {
    cwd: site.cwd,
    env: site.env,
  })
  if (enrolled.code !== 0) throw new Error(`link enrol: ${enrolled.stderr}`)
  const siteKey = await mintOwnerKey(site, org.id)
  site.server = await serve(site)
  const siteCall = api(site, slug, siteKey)
  const started = Date.now()
  while (((await siteCall('GET', '/api/link')).json() as { state: string }).state !== 'online') {
    if (Date.now() - started > 60_000) throw new Error('the link did not come online in 60 s')
    await sleep(100)
  }
  return {
    cloud,
    site,
    proxy,
    org,
    cloudCall,
    siteCall,
    cleanup: async () => {
      for (const s of [site, cloud]) {
        const code = await s.server?.stop()
        if (s.server) live.delete(s.server)
        if (code !== 0 && code !== null) console.log(`# ${s.env.SITEGRID_MODE} server exited ${code}: ${s.server?.output().slice(-2000)}`)
        s.server = undefined
      }
      await proxy.close()
      await cloud.handle.close()
      await site.handle.close()
      rmSync(cloud.cwd, { recursive: true, force: true })
      rmSync(site.cwd, { recursive: true, force: true })
    },
  }
}

/** Figure 2: one event at a time on the site until its row is in the cloud; and the bare round trip to the cloud. */
async function latency(p: Pair): Promise<{ p50: number; p99: number; roundTrip: number }> {
  const seen = async (eventId: string) =>
    (await sql`select 1 from alarm_events where org_id = ${p.org.id} and event_id = ${eventId}`.execute(p.cloud.handle.db)).rows.length > 0
  const times: number[] = []
  const tag = randomBytes(3).toString('hex')
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    await sleep(20 + Math.random() * 100)
    const eventId = `lat-${tag}-${i}`
    const t0 = performance.now()
    await p.siteCall('POST', `/api/sites/${SITE}/alarms/events`, { events: [alarmEvent(eventId, i, Date.now())] })
    while (!(await seen(eventId))) {
      if (performance.now() - t0 > 120_000) throw new Error(`event ${eventId} not in the cloud after 120 s`)
      await sleep(5)
    }
    times.push(performance.now() - t0)
  }
  const trips: number[] = []
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    const t0 = performance.now()
    const res = await httpRequest(`http://127.0.0.1:${p.proxy.port}/healthz`)
    if (res.status !== 200) throw new Error(`healthz: ${res.status}`)
    trips.push(performance.now() - t0)
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99), roundTrip: median(trips) }
}

/** Figure 1 and 3: the link cut, data made on the site, the link healed; until the cloud holds all of it. */
async function catchUp(p: Pair): Promise<{ fromHealMs: number; fromReconnectMs: number; siteRss: number; cloudRss: number; samples: number; events: number }> {
  p.proxy.cut()
  for (let done = 0, upload = 0; done < SAMPLES; upload++) {
    const rows = Math.min(SAMPLES_PER_UPLOAD, SAMPLES - done)
    const { body, contentType } = historianUpload(rows, upload * 1_000_000)
    const batch = (await p.siteCall('POST', '/api/historian/import-batches', body, contentType)).json() as { status: string; samplesStored?: number }
    if (batch.status !== 'complete') throw new Error(`historian import: ${JSON.stringify(batch).slice(0, 500)}`)
    done += rows
  }
  const t = Date.now()
  for (let i = 0; i < EVENTS; i += 1000) {
    const events = Array.from({ length: Math.min(1000, EVENTS - i) }, (_, j) => alarmEvent(`out-${i + j}`, i + j, t + i + j))
    await p.siteCall('POST', `/api/sites/${SITE}/alarms/events`, { events })
  }
  const samples = await count(p.site.handle, 'historian_points', p.org.id)
  const events = await count(p.site.handle, 'alarm_events', p.org.id)
  if (samples !== SAMPLES) throw new Error(`the site holds ${samples} samples, not ${SAMPLES}`)
  if (events !== EVENTS + LATENCY_EVENTS) throw new Error(`the site holds ${events} alarm events, not ${EVENTS + LATENCY_EVENTS}`)

  const memory = rssWatch([p.site.server!.child.pid!, p.cloud.server!.child.pid!])
  const acceptedAtHeal = p.proxy.stats().accepted
  let reconnectedAt: number | undefined
  const watchReconnect = setInterval(() => {
    if (reconnectedAt === undefined && p.proxy.stats().accepted > acceptedAtHeal) reconnectedAt = performance.now()
  }, 1)
  const healedAt = performance.now()
  p.proxy.heal()
  let cloudSamples = -1
  let cloudEvents = -1
  try {
    while (cloudSamples < samples || cloudEvents < events) {
      if (performance.now() - healedAt > CATCH_UP_LIMIT_MS)
        throw new Error(`not caught up in ${CATCH_UP_LIMIT_MS / 60_000} min: ${cloudSamples} samples, ${cloudEvents} events`)
      await sleep(200)
      cloudEvents = await count(p.cloud.handle, 'alarm_events', p.org.id)
      cloudSamples = await count(p.cloud.handle, 'historian_points', p.org.id)
    }
  } finally {
    clearInterval(watchReconnect)
  }
  const doneAt = performance.now()
  const [siteRss, cloudRss] = memory.stop()
  // Exactly once: the same counts again a moment later (a resend would add nothing; a duplicate would show here).
  await sleep(1000)
  cloudEvents = await count(p.cloud.handle, 'alarm_events', p.org.id)
  cloudSamples = await count(p.cloud.handle, 'historian_points', p.org.id)
  if (cloudSamples !== samples || cloudEvents !== events) throw new Error(`cloud ${cloudSamples} samples / ${cloudEvents} events, site ${samples} / ${events}`)
  const batches = async (h: DatabaseHandle) =>
    (await sql<{ id: string; status: string }>`select id, status from historian_batches where org_id = ${p.org.id} order by id`.execute(h.db)).rows
  const [siteBatches, cloudBatches] = [await batches(p.site.handle), await batches(p.cloud.handle)]
  if (JSON.stringify(siteBatches) !== JSON.stringify(cloudBatches) || siteBatches.length !== Math.ceil(SAMPLES / SAMPLES_PER_UPLOAD)) {
    throw new Error(`historian batches: site ${JSON.stringify(siteBatches)}, cloud ${JSON.stringify(cloudBatches)}`)
  }
  return { fromHealMs: doneAt - healedAt, fromReconnectMs: doneAt - (reconnectedAt ?? healedAt), siteRss: siteRss!, cloudRss: cloudRss!, samples, events }
}

/** The manual path: a tenant export of the site server's organisation, imported into a fresh cloud database. */
async function manualPath(dialect: Dialect, site: Side, org: Org): Promise<number> {
  const transfer = (handle: DatabaseHandle, mode: 'site' | 'cloud') =>
    createTenantTransferService({
      handle,
      clock: systemClock,
      mode,
      baseDomain: 'sitegrid.bench',
      sites: createSitesService({ handle, clock: systemClock, dependents: [] }),
      storedParts: historianStoredParts,
      maxPackageBytes: 8 * 1024 ** 3,
      maxInflatedBytes: 64 * 1024 ** 3,
    })
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-bench-pkg-'))
  const pkgPath = join(dir, 'package.jsonl.gz')
  const targetUrl = dialect.fresh ? await dialect.fresh() : `sqlite:${join(dir, 'target.db')}`
  const target = await connectDatabase(targetUrl, { poolSize: 4 })
  try {
    await migrateToLatest(target.db)
    const siteOrg = (await createOrgsService({ handle: site.handle, clock: systemClock }).findBySlug(org.slug))!
    const t0 = performance.now()
    await pipeline(Readable.from(await transfer(site.handle, 'site').exportPackage(siteOrg, null)), createWriteStream(pkgPath))
    await createOrgsService({ handle: target, clock: systemClock }).provision(org.slug, org.slug, org.id)
    await transfer(target, 'cloud').stage(siteOrg, CLI_ACTOR, createReadStream(pkgPath, { highWaterMark: 1 << 20 }))
    await transfer(target, 'cloud').applyStaged(siteOrg, CLI_ACTOR, { force: false, dryRun: false })
    const ms = performance.now() - t0
    const [samples, events] = [await count(target, 'historian_points', org.id), await count(target, 'alarm_events', org.id)]
    if (samples !== SAMPLES || events !== EVENTS + LATENCY_EVENTS) throw new Error(`the import holds ${samples} samples / ${events} events`)
    return ms
  } finally {
    await target.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

export async function benchFleetLink(dialects: Dialect[]): Promise<void> {
  try {
    await benchAll(dialects)
  } finally {
    for (const server of live) await server.stop('SIGKILL')
  }
}

async function benchAll(dialects: Dialect[]): Promise<void> {
  for (const dialect of dialects) {
    const runs: Array<{ load: number; lat: Awaited<ReturnType<typeof latency>>; up: Awaited<ReturnType<typeof catchUp>>; manualMs: number }> = []
    for (let run = 0; run < BENCH_RUNS; run++) {
      const load = loadNow()
      const p = await pair(dialect)
      let lat: Awaited<ReturnType<typeof latency>>
      let up: Awaited<ReturnType<typeof catchUp>>
      try {
        lat = await latency(p)
        up = await catchUp(p)
      } catch (err) {
        console.log(`# site server output: ${p.site.server?.output().slice(-3000)}`)
        console.log(`# cloud output: ${p.cloud.server?.output().slice(-3000)}`)
        await p.cleanup()
        throw err
      }
      // The servers stop before the baseline runs, so that neither figure pays for the other's processes.
      const siteHandle = await connectDatabase(p.site.url, { poolSize: 2 })
      const siteCwd = p.site.cwd
      p.site.cwd = mkdtempSync(join(tmpdir(), 'sitegrid-bench-keep-')) // cleanup removes this one, not the site's database
      await p.cleanup()
      try {
        const manualMs = await manualPath(dialect, { ...p.site, handle: siteHandle }, p.org)
        runs.push({ load, lat, up, manualMs })
      } finally {
        await siteHandle.close()
        rmSync(siteCwd, { recursive: true, force: true })
      }
      const r = runs.at(-1)!
      console.log(
        `${dialect.name.padEnd(8)}   run ${run + 1} (load ${load.toFixed(2)}): catch-up ${r.up.fromReconnectMs.toFixed(0)} ms (from heal ${r.up.fromHealMs.toFixed(0)} ms), manual ${r.manualMs.toFixed(0)} ms; ` +
          `latency p50 ${r.lat.p50.toFixed(0)} ms p99 ${r.lat.p99.toFixed(0)} ms; RSS site +${mib(r.up.siteRss)} cloud +${mib(r.up.cloudRss)}`,
      )
    }
    const of = <T>(f: (r: (typeof runs)[number]) => T) => runs.map(f)
    const ms = (n: number) => `${n.toFixed(0)} ms`
    const x = (n: number) => `${n.toFixed(2)}x`
    console.log(
      `${dialect.name.padEnd(8)} fleet link, cloud on ${dialect.name}, site server on SQLite, separate processes; ${SAMPLES} samples + ${EVENTS} alarm events; load ${medianWithSpread(
        of((r) => r.load),
        (n) => n.toFixed(2),
      )}`,
    )
    console.log(
      `${dialect.name.padEnd(8)}   catch-up after an outage ${medianWithSpread(
        of((r) => r.up.fromReconnectMs),
        ms,
      )} (from the heal ${medianWithSpread(
        of((r) => r.up.fromHealMs),
        ms,
      )}) vs export + import ${medianWithSpread(
        of((r) => r.manualMs),
        ms,
      )}: speed ${medianWithSpread(
        of((r) => r.manualMs / r.up.fromReconnectMs),
        x,
      )} of the manual path (≥ 1.00x: not slower)`,
    )
    console.log(
      `${dialect.name.padEnd(8)}   event accepted on the site → in the cloud: p50 ${medianWithSpread(
        of((r) => r.lat.p50),
        ms,
      )}, p99 ${medianWithSpread(
        of((r) => r.lat.p99),
        ms,
      )} over ${LATENCY_EVENTS} events vs one HTTP round trip to the cloud ${medianWithSpread(
        of((r) => r.lat.roundTrip),
        (n) => `${n.toFixed(2)} ms`,
      )}: p50 ${x(median(of((r) => r.lat.p50 / r.lat.roundTrip)))} of it`,
    )
    console.log(
      `${dialect.name.padEnd(8)}   peak VmRSS growth during catch-up: site server +${medianWithSpread(
        of((r) => r.up.siteRss),
        mib,
      )}, cloud +${medianWithSpread(
        of((r) => r.up.cloudRss),
        mib,
      )}`,
    )
  }
}

const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`
