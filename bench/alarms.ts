// Issue 8 / issue 29: ingest BENCH_ALARM_EVENTS (default 100 000) alarm events in batches of 1000 through the alarms
// service (dedup, state machine, history, one transaction per batch) against the same event rows inserted through the
// driver directly (one multi-row INSERT per batch, one transaction per batch), and against the all-rows baseline the
// issue names (issue 29, second pass): every row the service wrote for a batch (its events, the alarms it raised or
// updated, their history; read back from the outbox after each batch, not timed) written again by the driver into a
// site of its own, one multi-row INSERT a table (the alarms as an upsert) in one transaction a batch, the schema's
// triggers and foreign keys included; then read every page of the alarms list
// (limit 1000) through the service against the same keyset SELECT through the driver. Each figure BENCH_RUNS times
// (median, spread, 1-minute load), each run into fresh sites of the same database.
// Memory (issue 29's bound: ingestion of 1 000 000 events ≤ +64 MiB, BENCH_ALARM_EVENTS=1000000): the service's ingest
// runs in a process of its own (this file, BENCH_ALARM_JOB naming the job), so its peak RSS growth is the service's
// alone; the baselines run in the bench's process, each phase's peak growth measured and printed apart (session 19:
// in one process, a run's service figure included what the previous run's baselines had left in the heap).
// BENCH_ALARM_BASELINES=none measures the service alone (its time and memory; no baselines, no list), for the 1 000 000
// event memory figure in minutes rather than most of an hour.
// Before each run's ingest, a warm-up of WARMUP_BATCHES batches into a site of its own (in the ingesting process, so
// its code is compiled before it is timed), and once before the runs (PostgreSQL) `analyze` as autovacuum would have
// done on a live database: on a table that has never been analyzed, PostgreSQL's cached plan for the foreign-key check
// of every history row scans `alarms` (the cost of a history insert grows with the table, 3–5× at 5 000 alarms), a
// state no database that has served alarms for a minute is in. Both sides run on the analyzed tables.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { CLI_ACTOR } from '../src/identity.ts'
import { systemClock } from '../src/clock.ts'
import { connectDatabase, type DatabaseHandle } from '../src/db/connect.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import type { OrgId } from '../src/ids.ts'
import { createAlarmsService } from '../src/modules/alarms/service.ts'
import { createOrgsService } from '../src/modules/orgs/service.ts'
import { createSitesService } from '../src/modules/sites/service.ts'
import { sql } from 'kysely'
import { benchRuns, loadSpread, medianWithSpread } from './lib.ts'

const BATCH = 1000
const TAGS = 5000
const INSTANCES = 500
const WARMUP_BATCHES = 5
const COLUMNS = [
  'org_id',
  'site_code',
  'event_id',
  'alarm_id',
  'instance_id',
  'condition',
  'priority',
  'is_active',
  'occurred_at',
  'received_at',
  'message',
  'value',
  'limit_value',
  'effect',
] as const

function batchOf(b: number, base: number) {
  return Array.from({ length: BATCH }, (_, k) => {
    const i = b * BATCH + k
    const tag = i % TAGS
    // Each tag alternates active / normal on successive sweeps: every event is a real transition.
    return {
      eventId: `ev-${i}`,
      instanceId: `P${tag % INSTANCES}`,
      condition: `C${Math.floor(tag / INSTANCES)}`,
      priority: 'high' as const,
      state: Math.floor(i / TAGS) % 2 === 0 ? ('active' as const) : ('normal' as const),
      occurredAt: new Date(base + i * 10).toISOString(),
      value: i,
    }
  })
}

export async function benchAlarms(dialects: Array<{ name: string; url?: string }>): Promise<void> {
  const total = Number(process.env.BENCH_ALARM_EVENTS ?? 100_000)
  const withBaselines = process.env.BENCH_ALARM_BASELINES !== 'none'
  const batches = Math.ceil(total / BATCH)
  for (const dialect of dialects) {
    const dir = mkdtempSync(join(tmpdir(), 'sitegrid-bench-alarms-'))
    const url = dialect.url ?? `sqlite:${join(dir, 'bench.db')}`
    // As the server connects (cli/server.ts): on SQLite the WAL checkpoints run in a worker thread.
    const handle = await connectDatabase(url, { checkpoints: {} })
    await migrateToLatest(handle.db)
    const org = await createOrgsService({ handle, clock: systemClock }).provision(`alarms-${Date.now().toString(36)}`)
    const sites = createSitesService({ handle, clock: systemClock, dependents: [] })
    const alarms = alarmsService(handle)
    const base = Date.now() - total * 10 - 3_600_000
    const raw = await rawDriver(url)
    await sites.create(org.id, CLI_ACTOR, { code: 'WARM', name: 'WARM' })
    for (let b = 0; b < WARMUP_BATCHES; b++) await alarms.ingest(org.id, CLI_ACTOR, 'WARM', batchOf(b, base))
    if (handle.dialect === 'postgres') await sql`analyze`.execute(handle.db)

    const { figures: measured, loads } = await benchRuns(async (run): Promise<Record<string, number>> => {
      const [svc, warm, rawSite, rawRowsSite] = [`SVC${run}`, `WARM${run}`, `RAW${run}`, `ROWS${run}`]
      for (const code of [svc, warm, rawSite, rawRowsSite]) await sites.create(org.id, CLI_ACTOR, { code, name: code })
      const ingest = await ingestInChild({ url, orgId: org.id, site: svc, warmSite: warm, total, base })
      const service = {
        serviceMs: ingest.ms,
        rssMiB: ingest.memory.rssMiB,
        heapMiB: ingest.memory.heapMiB,
        externalMiB: ingest.memory.externalMiB,
      }
      if (!withBaselines) return service
      const driverRss = peakWatch()
      let t = performance.now()
      for (let b = 0; b < batches; b++) {
        const now = Date.now()
        await raw.insert(
          batchOf(b, base).map((e) => [
            org.id,
            rawSite,
            e.eventId,
            null,
            e.instanceId,
            e.condition,
            e.priority,
            e.state === 'active' ? 1 : 0,
            Date.parse(e.occurredAt),
            now,
            null,
            e.value,
            null,
            'none',
          ]),
        )
        driverRss.sample()
      }
      const driverMs = performance.now() - t
      const driverMemory = driverRss.stop()
      // The all-rows baseline: each batch's rows as the service wrote them (read back, not timed) written again by the
      // driver into a site of its own, one transaction a batch.
      let driverRowsMs = 0
      let driverRowsCpuMs = 0
      let rowsWritten = 0
      const rowsRss = peakWatch()
      for (let b = 0; b < batches; b++) {
        const rows = await raw.writtenRows(org.id, svc, ingest.marks[b]!, ingest.marks[b + 1]!)
        rowsWritten += rows.alarms.length + rows.history.length + rows.events.length
        const [started, cpu] = [performance.now(), process.cpuUsage()]
        await raw.insertRows(rawRowsSite, rows)
        driverRowsMs += performance.now() - started
        driverRowsCpuMs += cpuMs(cpu)
        rowsRss.sample()
      }
      const rowsMemory = rowsRss.stop()
      for (const table of ['alarms', 'alarm_history', 'alarm_events']) {
        const [written, driver] = [await raw.count(table, org.id, svc), await raw.count(table, org.id, rawRowsSite)]
        if (written !== driver) throw new Error(`${table}: the service wrote ${written} rows, the all-rows baseline ${driver}`)
      }

      t = performance.now()
      let pages = 0
      let cursor: string | undefined
      do {
        const page = await alarms.list(org.id, svc, { limit: 1000, cursor })
        cursor = page.nextCursor ?? undefined
        pages++
      } while (cursor)
      const listMs = performance.now() - t
      t = performance.now()
      const rawPages = await raw.pages(org.id, svc)
      const rawListMs = performance.now() - t
      if (rawPages !== pages) throw new Error(`the driver read ${rawPages} pages, the service ${pages}`)
      return {
        ...service,
        driverMs,
        speed: driverMs / ingest.ms,
        driverRowsMs,
        rowsSpeed: driverRowsMs / ingest.ms,
        rowsCpuSpeed: driverRowsCpuMs / ingest.cpuMs,
        rowsPerEvent: rowsWritten / total,
        driverRssMiB: driverMemory.rssMiB,
        rowsRssMiB: rowsMemory.rssMiB,
        pages,
        listMs,
        rawListMs,
        listRatio: listMs / rawListMs,
      }
    })
    const figures = (name: string) => measured[name]!
    const ms = (n: number) => `${n.toFixed(0)} ms`
    const x = (n: number) => `${n.toFixed(3)}x`
    const mib = (n: number) => `${n < 0 ? '-' : '+'}${Math.abs(n).toFixed(0)} MiB`
    const name = dialect.name.padEnd(8)
    const rate = medianWithSpread(
      figures('serviceMs').map((m) => (total / m) * 1000),
      (n) => n.toFixed(0),
    )
    if (withBaselines) {
      console.log(
        `alarm ingest ${total} events  ${name} service ${medianWithSpread(figures('serviceMs'), ms)} (${rate} ev/s)   driver INSERT ${medianWithSpread(figures('driverMs'), ms)}   service speed ${medianWithSpread(figures('speed'), x)} the driver's   ${loadSpread(loads)}`,
      )
      console.log(
        `alarm ingest ${total} events  ${name} driver INSERT of every row the service wrote (${figures('rowsPerEvent')[0]!.toFixed(2)} rows an event, link triggers included) ${medianWithSpread(
          figures('driverRowsMs'),
          ms,
        )}   service speed ${medianWithSpread(figures('rowsSpeed'), x)} the driver's all-rows${
          handle.dialect === 'sqlite' ? `; by CPU time (each side's process) ${medianWithSpread(figures('rowsCpuSpeed'), x)}` : ''
        }`,
      )
    } else {
      console.log(
        `alarm ingest ${total} events  ${name} service ${medianWithSpread(figures('serviceMs'), ms)} (${rate} ev/s), no baselines   ${loadSpread(loads)}`,
      )
    }
    console.log(
      `alarm ingest ${total} events  ${name} peak RSS growth of the service's ingest (a process of its own) ${medianWithSpread(figures('rssMiB'), mib)}; at the peak V8's heap ${medianWithSpread(
        figures('heapMiB'),
        mib,
      )}, outside it ${medianWithSpread(figures('externalMiB'), mib)}`,
    )
    if (withBaselines) {
      console.log(
        `alarm ingest ${total} events  ${name} peak RSS growth of the baselines (the bench's process, each phase from its start): events-only INSERT ${medianWithSpread(
          figures('driverRssMiB'),
          mib,
        )}, all-rows ${medianWithSpread(figures('rowsRssMiB'), mib)}`,
      )
      console.log(
        `alarm list ${figures('pages')[0]} pages of 1000  ${name} service ${medianWithSpread(figures('listMs'), ms)}   driver SELECT ${medianWithSpread(
          figures('rawListMs'),
          ms,
        )}   service/driver ${medianWithSpread(figures('listRatio'), (n) => `${n.toFixed(2)}x`)}`,
      )
    }

    await raw.close()
    await handle.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The alarms service as the bench measures it: the instance check is the instances area's, a fixed set stands in for it so both sides measure storage. */
function alarmsService(handle: DatabaseHandle) {
  const known = new Set(Array.from({ length: INSTANCES }, (_, i) => `P${i}`))
  return createAlarmsService({
    handle,
    clock: systemClock,
    sites: createSitesService({ handle, clock: systemClock, dependents: [] }),
    instances: { existingIds: async (_o, _s, ids) => new Set(ids.filter((id) => known.has(id))) },
  })
}

/** One run's ingest through the service: `total` events into `site` after a warm-up into `warmSite` (both made by the bench). */
interface IngestJob {
  url: string
  orgId: string
  site: string
  warmSite: string
  total: number
  base: number
}
type IngestResult = Awaited<ReturnType<typeof ingestOnce>>

/**
 * The ingest runs in a process of its own (this file, BENCH_ALARM_JOB naming the job), so that its peak RSS growth is
 * over a process that did nothing else: in the bench's process the baselines of the runs before leave a larger heap,
 * and V8 lets garbage grow in proportion to what the heap holds.
 */
async function ingestInChild(job: IngestJob): Promise<IngestResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    env: { ...process.env, BENCH_ALARM_JOB: JSON.stringify(job) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    out += text
  })
  const [code] = (await once(child, 'exit')) as [number | null]
  if (code !== 0) throw new Error(`the ingest process exited with ${code}`)
  return JSON.parse(out) as IngestResult
}

/**
 * The service's ingest, timed batch by batch, its CPU time, the outbox position after each batch (not timed: the rows
 * a batch wrote are the outbox rows between two marks) and the peak RSS growth from after the warm-up.
 */
async function ingestOnce({ url, orgId, site, warmSite, total, base }: IngestJob) {
  const handle = await connectDatabase(url, { checkpoints: {} })
  const alarms = alarmsService(handle)
  const org = orgId as OrgId
  for (let b = 0; b < WARMUP_BATCHES; b++) await alarms.ingest(org, CLI_ACTOR, warmSite, batchOf(b, base))
  // SQLite: the outbox's newest seq is its last row (the bench is its only writer); PostgreSQL: the organisation's.
  const outboxMark = async () =>
    Number(
      (handle.dialect === 'sqlite'
        ? await sql<{ seq: number }>`select coalesce(max(seq), 0) as seq from link_outbox`.execute(handle.db)
        : await sql<{ seq: number }>`select coalesce(max(seq), 0) as seq from link_outbox where org_id = ${org}`.execute(handle.db)
      ).rows[0]!.seq,
    )
  const marks = [await outboxMark()]
  const rss = peakWatch()
  let ms = 0
  let cpu = 0
  for (let b = 0; b < Math.ceil(total / BATCH); b++) {
    const [started, cpuAtStart] = [performance.now(), process.cpuUsage()]
    await alarms.ingest(org, CLI_ACTOR, site, batchOf(b, base))
    ms += performance.now() - started
    cpu += cpuMs(cpuAtStart)
    rss.sample()
    marks.push(await outboxMark())
  }
  const memory = rss.stop()
  await handle.close()
  return { ms, cpuMs: cpu, marks, memory }
}

/**
 * Peak RSS over the start, sampled every 20 ms and at each `sample()` (a SQLite batch never yields to the event loop's
 * timers, so a timer alone would not run until the ingest ends), with V8's heap and the memory outside it (`external`:
 * Buffers, ArrayBuffers) at the peak, each as growth over the start.
 */
function peakWatch() {
  const first = process.memoryUsage()
  let atPeak = first
  const sample = () => {
    const now = process.memoryUsage()
    if (now.rss > atPeak.rss) atPeak = now
  }
  const timer = setInterval(sample, 20)
  const mib = (a: number, b: number) => (a - b) / 2 ** 20
  return {
    sample,
    stop: () => {
      clearInterval(timer)
      sample()
      return {
        rssMiB: mib(atPeak.rss, first.rss),
        heapMiB: mib(atPeak.heapTotal, first.heapTotal),
        externalMiB: mib(atPeak.external, first.external),
      }
    },
  }
}

/** This process's CPU time (user + system) since `from`, in ms: on SQLite all of both sides' work, steadier than wall time on a loaded machine. */
const cpuMs = (from: NodeJS.CpuUsage) => {
  const { user, system } = process.cpuUsage(from)
  return (user + system) / 1000
}

/** The rows one batch of the service wrote, as the outbox recorded them (each row's image after the batch). */
interface WrittenRows {
  alarms: Row[]
  history: Row[]
  events: Row[]
}
type Row = Record<string, unknown>

/** The outbox rows of `site`'s alarm tables after position `after` up to `upTo`, as rows of those tables. */
const WRITTEN_SQL = (p: (i: number) => string) =>
  `select table_name, "row" from link_outbox where org_id = ${p(1)} and site_code = ${p(2)} and seq > ${p(3)} and seq <= ${p(4)}
    and table_name in ('alarms', 'alarm_history', 'alarm_events') order by seq`

function writtenRows(outbox: Array<{ table_name: string; row: string }>): WrittenRows {
  const alarms = new Map<string, Row>()
  const history: Row[] = []
  const events: Row[] = []
  for (const { table_name, row } of outbox) {
    const image = JSON.parse(row) as Row
    if (table_name === 'alarms') alarms.set(image.id as string, image)
    else (table_name === 'alarm_history' ? history : events).push(image)
  }
  // An alarm closed by the batch frees its tag before a new alarm of the same tag takes it (the unique open key).
  const ordered = [...alarms.values()].sort((a, b) => Number(a.active_key !== null) - Number(b.active_key !== null))
  return { alarms: ordered, history, events }
}

/**
 * The all-rows baseline's statements for `rows` moved to `site`: one multi-row INSERT a table (the alarms as an upsert
 * on their primary key: an alarm the batch updated is updated, one it raised inserted), alarms first (history refers
 * to them). `p(i)` is the dialect's placeholder.
 */
function rowStatements(site: string, rows: WrittenRows, p: (i: number) => string): Array<{ text: string; values: unknown[] }> {
  const out: Array<{ text: string; values: unknown[] }> = []
  const add = (table: string, list: Row[], tail: (columns: string[]) => string) => {
    if (list.length === 0) return
    const columns = Object.keys(list[0]!)
    let n = 0
    const tuples = list.map(() => `(${columns.map(() => p(++n)).join(',')})`).join(',')
    const values = list.flatMap((r) => columns.map((c) => (c === 'site_code' ? site : r[c])))
    out.push({ text: `insert into ${table} (${columns.map((c) => `"${c}"`).join(',')}) values ${tuples} ${tail(columns)}`, values })
  }
  add('alarms', rows.alarms, (columns) => {
    const set = columns.filter((c) => !['org_id', 'site_code', 'id'].includes(c)).map((c) => `"${c}" = excluded."${c}"`)
    return `on conflict (org_id, site_code, id) do update set ${set.join(', ')}`
  })
  add('alarm_history', rows.history, () => '')
  add('alarm_events', rows.events, () => '')
  return out
}

/**
 * The baselines through better-sqlite3 or pg, without Kysely or rules: the events-only INSERT (issue 8's, kept for
 * continuity: the same event rows, SQLite's connection at the driver's default `synchronous = FULL`), the all-rows
 * one (issue 29: every row the service wrote, on a connection with the service's pragmas, db/connect.ts), and the
 * same keyset query as the list.
 */
async function rawDriver(url: string) {
  const placeholders = (n: number, pgStyle: boolean) =>
    Array.from({ length: n }, (_, r) => `(${COLUMNS.map((_c, c) => (pgStyle ? `$${r * COLUMNS.length + c + 1}` : '?')).join(',')})`).join(',')
  const insertSql = (n: number, pgStyle: boolean) => `insert into alarm_events (${COLUMNS.join(',')}) values ${placeholders(n, pgStyle)}`
  const pageSql = (p: (i: number) => string) =>
    `select * from alarms where org_id = ${p(1)} and site_code = ${p(2)} and (changed_at < ${p(3)} or (changed_at = ${p(3)} and id < ${p(4)})) order by changed_at desc, id desc limit 1001`
  if (url.startsWith('sqlite:')) {
    const db = new BetterSqlite3(url.slice('sqlite:'.length))
    db.pragma('busy_timeout = 5000')
    const rowsDb = new BetterSqlite3(url.slice('sqlite:'.length))
    for (const pragma of ['synchronous = NORMAL', 'foreign_keys = ON', 'busy_timeout = 5000']) rowsDb.pragma(pragma)
    const prepared = new Map<string, BetterSqlite3.Statement>()
    const prepare = (text: string) => prepared.get(text) ?? prepared.set(text, rowsDb.prepare(text)).get(text)!
    // SQLite's parameter limit: 1000 rows × 14 columns fits (32766).
    const insert = db.prepare(insertSql(BATCH, false))
    const page = db.prepare(pageSql(() => '?'))
    const mark = rowsDb.prepare('select coalesce(max(seq), 0) from link_outbox').pluck()
    const written = rowsDb.prepare(WRITTEN_SQL(() => '?'))
    return {
      insert: async (rows: unknown[][]) => {
        db.transaction(() => insert.run(rows.flat()))()
      },
      outboxMark: async (_orgId: string) => mark.get() as number,
      writtenRows: async (orgId: string, site: string, after: number, upTo: number) =>
        writtenRows(written.all(orgId, site, after, upTo) as Array<{ table_name: string; row: string }>),
      count: async (table: string, orgId: string, site: string) =>
        rowsDb.prepare(`select count(*) from ${table} where org_id = ? and site_code = ?`).pluck().get(orgId, site) as number,
      insertRows: async (site: string, rows: WrittenRows) => {
        const statements = rowStatements(site, rows, () => '?')
        rowsDb.transaction(() => {
          for (const s of statements) prepare(s.text).run(s.values)
        })()
      },
      pages: async (orgId: string, site: string) => {
        let n = 0
        let key: [number, string] = [Number.MAX_SAFE_INTEGER, '~']
        for (;;) {
          const rows = page.all(orgId, site, key[0], key[0], key[1]) as Array<{ changed_at: number; id: string }>
          n++
          if (rows.length <= 1000) return n
          const last = rows[999]!
          key = [last.changed_at, last.id]
        }
      },
      close: async () => {
        db.close()
        rowsDb.close()
      },
    }
  }
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  return {
    insert: async (rows: unknown[][]) => {
      await pool.query(insertSql(rows.length, true), rows.flat())
    },
    outboxMark: async (orgId: string) =>
      Number((await pool.query<{ seq: string }>('select coalesce(max(seq), 0) as seq from link_outbox where org_id = $1', [orgId])).rows[0]!.seq),
    writtenRows: async (orgId: string, site: string, after: number, upTo: number) =>
      writtenRows(
        (
          await pool.query<{ table_name: string; row: string }>(
            WRITTEN_SQL((i) => `$${i}`),
            [orgId, site, after, upTo],
          )
        ).rows,
      ),
    count: async (table: string, orgId: string, site: string) =>
      Number((await pool.query<{ n: string }>(`select count(*) as n from ${table} where org_id = $1 and site_code = $2`, [orgId, site])).rows[0]!.n),
    insertRows: async (site: string, rows: WrittenRows) => {
      const client = await pool.connect()
      try {
        await client.query('begin')
        for (const s of rowStatements(site, rows, (i) => `$${i}`)) await client.query(s.text, s.values)
        await client.query('commit')
      } catch (err) {
        await client.query('rollback')
        throw err
      } finally {
        client.release()
      }
    },
    pages: async (orgId: string, site: string) => {
      let n = 0
      let key: [number, string] = [Number.MAX_SAFE_INTEGER, '~']
      for (;;) {
        const { rows } = await pool.query<{ changed_at: string; id: string }>(
          pageSql((i) => `$${i}`),
          [orgId, site, key[0], key[1]],
        )
        n++
        if (rows.length <= 1000) return n
        const last = rows[999]!
        key = [Number(last.changed_at), last.id]
      }
    },
    close: async () => {
      await pool.end()
    },
  }
}

if (import.meta.url === `file://${process.argv[1]}` && process.env.BENCH_ALARM_JOB !== undefined) {
  console.log(JSON.stringify(await ingestOnce(JSON.parse(process.env.BENCH_ALARM_JOB) as IngestJob)))
}
