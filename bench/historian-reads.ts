// Issue 30: interpolated and time-weighted reads over BENCH_HISTORIAN_READ_SAMPLES (default 10 000 000) samples of
// one tag, answered by the API (validation, the statements, JSON), each reported against the same statements run
// through the driver alone (better-sqlite3 / pg) in the same run. The issue asks for ≥ 0.5× (the API at least half
// as fast as the driver). Not in the default set: BENCH_ONLY=historian-reads, or `node --import tsx bench/historian-reads.ts`
// (SQLite; BENCH_DATABASE_URL adds a PostgreSQL database).
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
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
import { findSeriesId, signalAtQuery, timeWeightedAveragesQuery } from '../src/modules/historian/store/series-reads.ts'
import { createOrgsService } from '../src/modules/orgs/service.ts'
import { seedPlant } from '../test/support/historian-upload.ts'
import { ratio } from './lib.ts'

const START = Date.UTC(2024, 0, 1)
const STEP_MS = 1_000
const POINTS = 1_000

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

async function timeIt(runs: number, fn: () => Promise<unknown>): Promise<number> {
  await fn() // warm-up
  const start = process.hrtime.bigint()
  for (let i = 0; i < runs; i++) await fn()
  return Number(process.hrtime.bigint() - start) / 1e6 / runs
}

export async function benchHistorianReads(dialects: Array<{ name: string; url?: string }>): Promise<void> {
  const samples = Number(process.env.BENCH_HISTORIAN_READ_SAMPLES ?? 10_000_000)
  const runs = 5
  const end = START + samples * STEP_MS
  const from = new Date(START).toISOString()
  const to = new Date(end).toISOString()
  // POINTS grid times and POINTS buckets over the whole series, in whole seconds.
  const width = Math.max(1, Math.floor(samples / POINTS))
  console.log(`# historian reads: ${samples.toLocaleString('en')} samples of one tag (1 s apart, 1 % bad), ${POINTS} values a read`)
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
          from generate_series(1, ${samples - 1}) g`.execute(handle.db)
      if (driver instanceof pg.Client) {
        await driver.connect()
        await driver.query('analyze historian_points')
      }
      console.log(`${dialect.name.padEnd(8)} seeded in ${(Number(process.hrtime.bigint() - seedStart) / 1e9).toFixed(1)} s`)
      const run = async (query: CompiledQuery) => {
        if (driver instanceof pg.Client) return (await driver.query(query.sql, [...query.parameters])).rows.length
        return driver.prepare(query.sql).all(...(query.parameters as unknown[])).length
      }
      const get = async (query: string) => {
        const res = await app.inject({ method: 'GET', url: `/api/sites/BENCH/historian/series?instanceId=ins_pump&tag=flow&${query}`, headers })
        if (res.statusCode !== 200) throw new Error(`${query}: ${res.statusCode} ${res.body.slice(0, 300)}`)
        return res.body.length
      }
      const key = { orgId, seriesId, includeBad: false, isStep: false }
      const grid = Array.from({ length: POINTS }, (_, k) => START + k * width * STEP_MS)
      const windows = grid.map((a) => ({ start: a, a, z: Math.min(a + width * STEP_MS, end) }))
      const interpolatedApi = await timeIt(runs, () => get(`mode=interpolated&interval=${width}s&from=${from}&to=${to}&limit=${POINTS}`))
      const interpolatedDriver = await timeIt(runs, () => run(signalAtQuery(key, grid).compile(handle.db)))
      const seriesKey = { siteCode: 'BENCH', instanceId: 'ins_pump', tagKey: 'flow', from: START, to: end }
      const bucketsApi = await timeIt(runs, () => get(`bucket=${width}s&from=${from}&to=${to}&limit=${POINTS}`))
      const bucketsDriver = await timeIt(runs, async () => {
        await run(bucketsQuery(orgId, seriesKey, width * STEP_MS, { limit: POINTS }).compile(handle.db))
        return run(timeWeightedAveragesQuery(key, width * STEP_MS, START, windows).compile(handle.db))
      })
      const line = (label: string, api: number, alone: number) =>
        console.log(
          `${dialect.name.padEnd(8)} ${label.padEnd(34)} API ${api.toFixed(1)} ms  driver ${alone.toFixed(1)} ms  API speed ${ratio(alone, api)} of the driver's`,
        )
      line(`interpolated, ${POINTS} values`, interpolatedApi, interpolatedDriver)
      line(`buckets with time-weighted average`, bucketsApi, bucketsDriver)
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
