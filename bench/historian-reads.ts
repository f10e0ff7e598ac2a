// Issues 29 and 30: reads of one tag over BENCH_HISTORIAN_READ_SAMPLES (default 10 000 000) samples, answered by the
// API over loopback HTTP (validation, the statements, JSON), each reported against the same statements run through the driver alone
// (better-sqlite3 / pg) in the same run: a raw page of the documented maximum (10 000 samples), the aggregate mode
// (1 000 buckets: min/max/mean/… and the time-weighted average), and an interpolated read of 1 000 values. Aims: raw
// ≥ 0.5×, buckets ≥ 0.8× (issue 29), interpolated and time-weighted ≥ 0.5× (issue 30). Beside them, for scale, a bare
// min/max/avg/count GROUP BY of the same samples through the driver. Each figure is measured BENCH_RUNS times (median,
// spread, load); the peak RSS growth of one API read and of one driver statement are printed apart, and the process's
// over all the reads (issue 29: historian +64 MiB, the API's bound).
// Not in the default set: BENCH_ONLY=historian-reads, or `node --import tsx bench/historian-reads.ts` (SQLite;
// BENCH_DATABASE_URL adds a PostgreSQL database).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { get as httpGet } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { sql, type CompiledQuery } from 'kysely'
import pg from 'pg'
import { buildApp } from '../src/app.ts'
import { CLI_ACTOR } from '../src/identity.ts'
import { systemClock } from '../src/clock.ts'
import { loadConfig } from '../src/config/load.ts'
import { connectDatabase } from '../src/db/connect.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import type { OrgId } from '../src/ids.ts'
import { createLogger } from '../src/http/logger.ts'
import { createApiKeysService } from '../src/modules/api-keys/service.ts'
import { bucketsQuery } from '../src/modules/historian/store/queries.ts'
import { findSeriesId, rawSamplesQuery, signalAtQuery, timeWeightedAveragesQuery } from '../src/modules/historian/store/series-reads.ts'
import { createOrgsService } from '../src/modules/orgs/service.ts'
import { seedPlant } from '../test/support/historian-upload.ts'
import { benchRuns, loadSpread, median, medianWithSpread } from './lib.ts'

const START = Date.UTC(2024, 0, 1)
const STEP_MS = 1_000
const POINTS = 1_000
/** The documented maximum page (SeriesQuerySchema's limit). */
const RAW_PAGE = 10_000

/** A multipart body of the import: one sample, so that the batch and the series exist; the rest is inserted in SQL. */
function seedUpload(): { payload: string; headers: Record<string, string> } {
  const b = `----bench${randomBytes(6).toString('hex')}`
  const part = (name: string, value: string, file?: string) =>
    `--${b}\r\ncontent-disposition: form-data; name="${name}"${file ? `; filename="${file}"\r\ncontent-type: text/csv` : ''}\r\n\r\n${value}\r\n`
  const payload =
    part('site_id', 'BENCH') +
    part('format', 'long') +
    part('mapping_csv', 'historian_tag,instance_id,tag_key\nT,ins_pump,flow\n', 'mapping.csv') +
    part('trend_csv', `timestamp,tag,value\n${new Date(START).toISOString()},T,0\n`, 'trend.csv') +
    `--${b}--\r\n`
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${b}` } }
}

/** Milliseconds of one call of `fn`, the mean over `reps` calls. */
async function timeIt(reps: number, fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint()
  for (let i = 0; i < reps; i++) await fn()
  return Number(process.hrtime.bigint() - start) / 1e6 / reps
}

/**
 * The process's peak RSS since `reset` (Linux: VmHWM, reset through /proc/self/clear_refs), in bytes. Sampling would
 * miss it: a SQLite statement blocks the event loop while it runs.
 */
const peakRss = {
  reset: () => writeFileSync('/proc/self/clear_refs', '5'),
  read: () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024,
}

export async function benchHistorianReads(dialects: Array<{ name: string; url?: string }>): Promise<void> {
  const samples = Number(process.env.BENCH_HISTORIAN_READ_SAMPLES ?? 10_000_000)
  const end = START + samples * STEP_MS
  const from = new Date(START).toISOString()
  const to = new Date(end).toISOString()
  // POINTS grid times and POINTS buckets over the whole series, in whole seconds; the raw page starts mid-series.
  const width = Math.max(1, Math.floor(samples / POINTS))
  const rawFrom = new Date(START + Math.floor(samples / 2) * STEP_MS).toISOString()
  console.log(
    `# historian reads: ${samples.toLocaleString('en')} samples of one tag (1 s apart, 1 % bad); ${POINTS} buckets or values a read, raw pages of ${RAW_PAGE}`,
  )
  for (const dialect of dialects) {
    const dir = mkdtempSync(join(tmpdir(), 'sitegrid-bench-reads-'))
    const databaseUrl = dialect.url ?? `sqlite:${join(dir, 'reads.db')}`
    const config = loadConfig(
      {
        DATABASE_URL: databaseUrl,
        SITEGRID_KEY_SECRET: randomBytes(32).toString('base64'),
        SITEGRID_MODE: 'cloud',
        SITEGRID_RATE_LIMIT_PER_MINUTE: '100000000',
        SITEGRID_DATA_DIR: tmpdir(),
      },
      { requireKeySecret: true },
    )
    const handle = await connectDatabase(config.databaseUrl)
    await migrateToLatest(handle.db)
    const org = await createOrgsService({ handle, clock: systemClock }).provision(`bench-${randomBytes(3).toString('hex')}`)
    const orgId = org.id as OrgId
    const minted = await createApiKeysService({ handle, clock: systemClock, keySecret: config.keySecret }).mint(orgId, CLI_ACTOR, {
      role: 'owner',
      name: 'bench',
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    })
    const app = await buildApp({ config, handle, clock: systemClock, log: createLogger('warn') })
    const headers = { host: `${org.slug}.localhost`, 'x-api-key': minted.plaintext }
    const driver = dialect.url === undefined ? new BetterSqlite3(join(dir, 'reads.db'), { readonly: true }) : new pg.Client({ connectionString: dialect.url })
    try {
      await seedPlant(handle.db, orgId, { siteCode: 'BENCH', instances: [{ id: 'ins_pump' }], at: Date.now() })
      const upload = seedUpload()
      const imported = await app.inject({
        method: 'POST',
        url: '/api/historian/import-batches',
        headers: { ...headers, ...upload.headers },
        payload: upload.payload,
      })
      if (imported.statusCode !== 201) throw new Error(`seed import: ${imported.statusCode} ${imported.body.slice(0, 300)}`)
      const batchId = (imported.json() as { id: string }).id
      const seriesId = (await findSeriesId(handle.db, orgId, 'BENCH', 'ins_pump', 'flow'))!
      const seedStart = process.hrtime.bigint()
      const value = sql`((g * 7919) % 1000) / 10.0`
      const quality = sql`case when g % 100 = 0 then 0 else 192 end`
      if (dialect.url === undefined)
        await sql`with recursive n(g) as (select 1 union all select g + 1 from n where g < ${samples - 1})
          insert into historian_points (org_id, series_id, ts, value, text, quality, batch_id)
          select ${orgId}, ${seriesId}, ${START} + g * ${STEP_MS}, ${value}, null, ${quality}, ${batchId} from n`.execute(handle.db)
      else
        await sql`insert into historian_points (org_id, series_id, ts, value, text, quality, batch_id)
          select ${orgId}, ${seriesId}, ${START} + g * ${STEP_MS}::bigint, ${value}, null, ${quality}, ${batchId}
          from generate_series(1, ${samples - 1}::bigint) g`.execute(handle.db)
      if (driver instanceof pg.Client) {
        await driver.connect()
        await driver.query('analyze historian_points')
      }
      console.log(`${dialect.name.padEnd(8)} seeded in ${(Number(process.hrtime.bigint() - seedStart) / 1e9).toFixed(1)} s`)
      // Each call's peak RSS growth (VmHWM reset before it, read after), the largest per side: the API's reads apart from
      // the driver's, whose connection keeps its own page cache and sorters in this process.
      const growth = { api: 0, driver: 0, peak: 0 }
      const tracked = async <T>(side: 'api' | 'driver', fn: () => Promise<T>): Promise<T> => {
        const before = process.memoryUsage().rss
        peakRss.reset()
        try {
          return await fn()
        } finally {
          const peak = peakRss.read()
          growth[side] = Math.max(growth[side], peak - before)
          growth.peak = Math.max(growth.peak, peak)
        }
      }
      const run = (query: CompiledQuery) =>
        tracked('driver', async () => {
          if (driver instanceof pg.Client) return (await driver.query(query.sql, [...query.parameters])).rows.length
          return driver.prepare(query.sql).all(...(query.parameters as unknown[])).length
        })
      // Over loopback HTTP, as a client reads (app.inject keeps each answer's body alive in this process: ~1 MB a raw page),
      // a connection a request (a kept-alive one may be closed by the server's idle timer while a SQLite statement of the
      // driver's blocks this process).
      const address = await app.listen({ port: 0, host: '127.0.0.1' })
      const get = (query: string) =>
        tracked(
          'api',
          () =>
            new Promise<number>((resolve, reject) => {
              const req = httpGet(`${address}/api/sites/BENCH/historian/series?instanceId=ins_pump&tag=flow&${query}`, { headers, agent: false }, (res) => {
                const chunks: Buffer[] = []
                res.on('data', (chunk: Buffer) => chunks.push(chunk))
                res.on('end', () => {
                  const body = Buffer.concat(chunks)
                  if (res.statusCode === 200) resolve(body.length)
                  else reject(new Error(`${query}: ${res.statusCode} ${body.toString('utf8', 0, 300)}`))
                })
              })
              req.on('error', reject)
            }),
        )
      const key = { orgId, seriesId, includeBad: false, isStep: false }
      const grid = Array.from({ length: POINTS }, (_, k) => START + k * width * STEP_MS)
      const windows = grid.map((a) => ({ start: a, a, z: Math.min(a + width * STEP_MS, end) }))
      const bucketMs = width * STEP_MS
      const offset = sql`(((ts % ${bucketMs}) + ${bucketMs}) % ${bucketMs})`
      // For scale only: the least any bucket read costs, one GROUP BY of the visible samples (no first/last, spread or
      // time-weighted average).
      const groupBy = sql`select ts - ${offset} as b, min(value), max(value), avg(value), count(*) from historian_points
        where org_id = ${orgId} and series_id = ${seriesId} and ts >= ${START} and ts < ${end} and value is not null and quality >= 64
        group by b order by b`.compile(handle.db)
      // Each figure: [label, API, driver, calls a run]; one call of each first (warm-up), then BENCH_RUNS runs.
      const figures: Array<[string, () => Promise<unknown>, () => Promise<unknown>, number]> = [
        [
          `raw page of ${RAW_PAGE}`,
          () => get(`from=${rawFrom}&to=${to}&limit=${RAW_PAGE}`),
          () => run(rawSamplesQuery(orgId, seriesId, Date.parse(rawFrom), end, { limit: RAW_PAGE }).compile(handle.db)),
          5,
        ],
        [
          `aggregate, ${POINTS} buckets`,
          () => get(`bucket=${width}s&from=${from}&to=${to}&limit=${POINTS}`),
          async () => {
            await run(bucketsQuery(orgId, seriesId, bucketMs, { from: START, to: end, limit: POINTS }).compile(handle.db))
            return run(timeWeightedAveragesQuery(key, bucketMs, START, windows).compile(handle.db))
          },
          1,
        ],
        [
          `interpolated, ${POINTS} values`,
          () => get(`mode=interpolated&interval=${width}s&from=${from}&to=${to}&limit=${POINTS}`),
          () => run(signalAtQuery(key, grid).compile(handle.db)),
          5,
        ],
      ]
      const rssBefore = process.memoryUsage().rss
      const ms = (n: number) => `${n.toFixed(1)} ms`
      for (const [label, api, alone, calls] of figures) {
        await api()
        await alone()
        const { figures: f, loads } = await benchRuns(async () => ({ api: await timeIt(calls, api), driver: await timeIt(calls, alone) }))
        const ratios = f.api.map((a, i) => f.driver[i]! / a)
        console.log(
          `${dialect.name.padEnd(8)} ${label.padEnd(26)} API ${medianWithSpread(f.api, ms)}  driver ${medianWithSpread(f.driver, ms)}  API speed ${median(ratios).toFixed(2)}× the driver's (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}), ${loadSpread(loads)}`,
        )
        if (calls === 1) {
          // The aggregate's two statements apart, and the bare GROUP BY beside them.
          const { figures: parts } = await benchRuns(async () => ({
            buckets: await timeIt(1, () => run(bucketsQuery(orgId, seriesId, bucketMs, { from: START, to: end, limit: POINTS }).compile(handle.db))),
            twa: await timeIt(1, () => run(timeWeightedAveragesQuery(key, bucketMs, START, windows).compile(handle.db))),
            groupBy: await timeIt(1, () => run(groupBy)),
          }))
          console.log(
            `${dialect.name.padEnd(8)}   its statements through the driver: buckets ${medianWithSpread(parts.buckets, ms)}, time-weighted averages ${medianWithSpread(parts.twa, ms)}; a bare GROUP BY ${medianWithSpread(parts.groupBy, ms)} (API speed ${(median(parts.groupBy) / median(f.api)).toFixed(2)}× of it)`,
          )
        }
      }
      const mib = (n: number) => (n / 1_048_576).toFixed(1)
      console.log(
        `${dialect.name.padEnd(8)} peak RSS growth of one read: API +${mib(growth.api)} MiB, driver +${mib(growth.driver)} MiB; over all the reads +${mib(growth.peak - rssBefore)} MiB (${mib(rssBefore)} → ${mib(growth.peak)} MiB)`,
      )
    } finally {
      if (driver instanceof pg.Client) await driver.end()
      else driver.close()
      await app.close()
      await handle.close()
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dialects: Array<{ name: string; url?: string }> = [{ name: 'sqlite' }]
  if (process.env.BENCH_DATABASE_URL) dialects.push({ name: 'postgres', url: process.env.BENCH_DATABASE_URL })
  await benchHistorianReads(dialects)
}
