// Issue 9: historian import of a generated `long` file (BENCH_HISTORIAN_ROWS samples, default 5 000 000) through the
// service, against a raw load of the same rows in the same run: PostgreSQL `COPY … FROM STDIN` (CSV as-is) and SQLite
// prepared inserts in one transaction, both into a table with the same kind of primary key; on PostgreSQL also a raw
// COPY into a table of historian_points' own shape (what the schema costs before any import work). Also the parser on its
// own, and the peak RSS growth of the import.
import { spawn } from 'node:child_process'
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import pg from 'pg'
import copyStreams from 'pg-copy-streams'
import { pipeline } from 'node:stream/promises'
import { Readable } from 'node:stream'
import { CLI_ACTOR } from '../src/identity.ts'
import { systemClock } from '../src/clock.ts'
import { connectDatabase } from '../src/db/connect.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { grantAppRole } from '../src/db/row-level-security.ts'
import { withOrgScope } from '../src/db/tenant-scope.ts'
import type { OrgId } from '../src/ids.ts'
import { parseStream } from '../src/modules/historian/parse/index.ts'
import { createHistorianService, type UploadPart } from '../src/modules/historian/service/index.ts'
import { createOrgsService } from '../src/modules/orgs/service.ts'
import { appRoleUrl, ensureAppRole, TEST_APP_ROLE } from '../test/postgres.ts'
import { benchRuns, loadSpread, median, medianWithSpread } from './lib.ts'

const TAGS = 100
const SEED = 9

/** `timestamp,tag,value` rows: TAGS tags, one sample per tag per second, values from a fixed LCG (seed SEED). */
export async function generate(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path)
  out.write('timestamp,tag,value\n')
  let x = SEED
  const base = Date.UTC(2024, 0, 1)
  let chunk = ''
  for (let i = 0; i < rows; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648
    chunk += `${new Date(base + Math.floor(i / TAGS) * 1000).toISOString()},T${i % TAGS},${(x / 1e6).toFixed(3)}\n`
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain')
      chunk = ''
    }
  }
  out.end(chunk)
  await once(out, 'finish')
}

/** Peak RSS over the start, sampled every 20 ms. */
export function rssWatch() {
  const first = process.memoryUsage()
  let atPeak = first
  const timer = setInterval(() => {
    const now = process.memoryUsage()
    if (now.rss > atPeak.rss) atPeak = now
  }, 20)
  const mib = (n: number) => `${(n / 1_048_576).toFixed(0)}`
  return {
    stop: () => {
      clearInterval(timer)
      // What the peak was made of: V8's heap (used/reserved) and memory outside it, at the start → at the peak.
      const breakdown = `start ${mib(first.rss)} MiB; heap ${mib(first.heapUsed)}/${mib(first.heapTotal)} → ${mib(atPeak.heapUsed)}/${mib(atPeak.heapTotal)} MiB, external ${mib(first.external)} → ${mib(atPeak.external)} MiB`
      return { start: first.rss, peak: atPeak.rss, growthMiB: (atPeak.rss - first.rss) / 1_048_576, breakdown }
    },
  }
}

/** Wall time of `fn`, and the CPU time (user + system) of this process, all its threads, meanwhile. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; cpuMs: number; value: T }> {
  const t0 = performance.now()
  const cpu0 = process.cpuUsage()
  const value = await fn()
  const cpu = process.cpuUsage(cpu0)
  return { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, value }
}

export const perSecond = (n: number, ms: number) => (n / ms) * 1000
export const fmt = (n: number) => `${Math.round(n).toLocaleString('en')} samples/s`

async function parserAlone(file: string): Promise<number> {
  const run = parseStream(createReadStream(file, { highWaterMark: 256 * 1024 }), { format: 'long' })
  const { ms } = await timed(async () => {
    for await (const _ of run) {
      /* drain */
    }
  })
  return perSecond(run.summary.samples, ms)
}

/**
 * One import through the historian service. `asServiceRole` (PostgreSQL): the service connects as a role that is
 * neither owner nor BYPASSRLS, as `serve` does with SITEGRID_DATABASE_APP_URL, so row-level security checks every row;
 * otherwise it connects as the bench's own user (the database owner, a superuser with the embedded server).
 */
interface ImportJob {
  url: string
  file: string
  rows: number
  asServiceRole?: boolean
}
type ImportResult = Awaited<ReturnType<typeof importOnce>>

/**
 * The import runs in a process of its own (this file, BENCH_HISTORIAN_IMPORT naming the job), so that its peak RSS
 * growth is over a process that did nothing else: in the bench's process the earlier steps leave memory the
 * allocators keep, and the import would grow into it unseen.
 */
export async function importInChild(job: ImportJob): Promise<ImportResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    env: { ...process.env, BENCH_HISTORIAN_IMPORT: JSON.stringify(job) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    out += text
  })
  const [code] = (await once(child, 'exit')) as [number | null]
  if (code !== 0) throw new Error(`the import process exited with ${code}`)
  return JSON.parse(out) as ImportResult
}

async function importOnce({ url, file, rows, asServiceRole }: ImportJob) {
  const owner = await connectDatabase(url, { poolSize: 4, statementTimeoutMs: 600_000 })
  await migrateToLatest(owner.db)
  // Earlier runs on the same database leave their deleted points as dead rows (and index entries) that the import
  // would walk past: the raw baselines write fresh tables, so the service gets a vacuumed one.
  if (owner.dialect === 'postgres') await sql`vacuum historian_points, historian_series, historian_batches`.execute(owner.db)
  // Every PostgreSQL step starts from a checkpoint, so none inherits the WAL of the step before (max_wal_size).
  if (owner.dialect === 'postgres') await sql`checkpoint`.execute(owner.db)
  const org = await createOrgsService({ handle: owner, clock: systemClock }).provision(`bench-${Date.now().toString(36)}`)
  const orgId = org.id as OrgId
  const now = Date.now()
  await owner.db
    .insertInto('sites')
    .values({ org_id: orgId, code: 'bench', name: 'Bench', description: null, location: null, time_zone: 'UTC', status: 0, created_at: now, updated_at: now })
    .execute()
  let handle = owner
  if (asServiceRole) {
    await ensureAppRole(url)
    await grantAppRole(owner.db, TEST_APP_ROLE)
    handle = await connectDatabase(appRoleUrl(url), { poolSize: 4, statementTimeoutMs: 600_000 })
  }
  const historian = createHistorianService({
    handle,
    clock: systemClock,
    maxFileBytes: 2 ** 40,
    sites: { require: async (_o, code) => ({ code, timeZone: 'UTC' }) },
    instances: { existingIds: async (_o, _s, ids) => new Set(ids) },
  })
  const mapping = `historian_tag,instance_id,tag_key\n${Array.from({ length: TAGS }, (_, i) => `T${i},ins_${i % 10},tag_${i}`).join('\n')}\n`
  async function* parts(): AsyncGenerator<UploadPart> {
    yield { kind: 'field', name: 'site_id', value: 'bench' }
    yield { kind: 'field', name: 'format', value: 'long' }
    yield { kind: 'file', name: 'mapping_csv', filename: 'm.csv', stream: [Buffer.from(mapping)] as unknown as AsyncIterable<Uint8Array> }
    yield { kind: 'file', name: 'trend_csv', filename: 't.csv', stream: createReadStream(file, { highWaterMark: 256 * 1024 }) }
  }
  const rss = rssWatch()
  const { ms, cpuMs, value } = await timed(() => withOrgScope(orgId, () => historian.importBatch(orgId, CLI_ACTOR, parts(), { bytesTotal: null })))
  const memory = rss.stop()
  if (value.samplesStored !== rows) throw new Error(`stored ${value.samplesStored} of ${rows}`)
  await owner.db.deleteFrom('orgs').where('id', '=', orgId).execute()
  if (handle !== owner) await handle.close()
  await owner.close()
  return { rate: perSecond(rows, ms), cpuUsPerSample: (cpuMs * 1000) / rows, memory }
}

async function rawSqlite(dir: string, file: string, rows: number): Promise<number> {
  const db = new BetterSqlite3(join(dir, 'raw.db'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec('drop table if exists raw')
  db.exec('create table raw (tag text not null, ts integer not null, value real, primary key (tag, ts))')
  const insert = db.prepare('insert into raw (tag, ts, value) values (?, ?, ?)')
  const { ms } = await timed(async () => {
    db.exec('begin')
    let rest = ''
    let header = true
    for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
      const lines = (rest + chunk).split('\n')
      rest = lines.pop()!
      for (const line of lines) {
        if (header) {
          header = false
          continue
        }
        const a = line.indexOf(',')
        const b = line.indexOf(',', a + 1)
        insert.run(line.slice(a + 1, b), Date.parse(line.slice(0, a)), Number(line.slice(b + 1)))
      }
    }
    db.exec('commit')
  })
  db.close()
  return perSecond(rows, ms)
}

/** `COPY … FROM STDIN` of a byte stream on a pg.Client (pg-copy-streams). */
async function copyFrom(client: pg.Client, text: string, source: NodeJS.ReadableStream): Promise<void> {
  await pipeline(source, client.query(copyStreams.from(text)))
}

async function rawCopy(url: string, file: string, rows: number): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query('drop table if exists bench_raw')
  await client.query('checkpoint')
  await client.query('create table bench_raw (ts timestamptz not null, tag text not null, value float8, primary key (tag, ts))')
  const { ms } = await timed(() =>
    copyFrom(client, 'copy bench_raw (ts, tag, value) from stdin (format csv, header true)', createReadStream(file, { highWaterMark: 256 * 1024 })),
  )
  const count = await client.query<{ n: string }>('select count(*) as n from bench_raw')
  if (Number(count.rows[0]!.n) !== rows) throw new Error('COPY lost rows')
  await client.query('drop table bench_raw')
  await client.end()
  return perSecond(rows, ms)
}

/**
 * The same rows COPYed into a table of historian_points' shape (org, series id, ts, value, text, quality, batch id;
 * primary key (series_id, ts), the batch index; no row-level security, no staging): what the schema alone costs,
 * before any import work.
 */
async function rawCopyShaped(url: string, file: string, rows: number): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query('drop table if exists bench_shaped')
  await client.query('checkpoint')
  await client.query(`create table bench_shaped (org_id text not null, series_id integer not null, ts bigint not null,
    value float8, text text, quality smallint not null, batch_id text not null, primary key (series_id, ts))`)
  // No (batch_id) index since migration 1900 (historian_points has only its primary key).
  // The shaped rows come from the same file, converted while streaming (a few string operations per line).
  const shaped = async function* () {
    let rest = ''
    let header = true
    for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
      const lines = (rest + chunk).split('\n')
      rest = lines.pop()!
      let out = ''
      for (const line of lines) {
        if (header) {
          header = false
          continue
        }
        const a = line.indexOf(',')
        const b = line.indexOf(',', a + 1)
        out += `org_bench_0000000000000000000\t${line.slice(a + 2, b)}\t${Date.parse(line.slice(0, a))}\t${line.slice(b + 1)}\t\\N\t192\tbat_bench_00000000000000000\n`
      }
      yield Buffer.from(out)
    }
  }
  const { ms } = await timed(() =>
    pipeline(Readable.from(shaped()), client.query(copyStreams.from('copy bench_shaped (org_id, series_id, ts, value, text, quality, batch_id) from stdin'))),
  )
  const count = await client.query<{ n: string }>('select count(*) as n from bench_shaped')
  if (Number(count.rows[0]!.n) !== rows) throw new Error('shaped COPY lost rows')
  await client.query('drop table bench_shaped')
  await client.end()
  return perSecond(rows, ms)
}

export async function benchHistorian(dialects: Array<{ name: string; url?: string }>): Promise<void> {
  const rows = Number(process.env.BENCH_HISTORIAN_ROWS ?? 5_000_000)
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-bench-historian-'))
  try {
    const file = join(dir, 'long.csv')
    await generate(file, rows)
    const mib = statSync(file).size / 1_048_576
    console.log(`# historian import: long file of ${rows.toLocaleString('en')} samples (${mib.toFixed(0)} MiB, ${TAGS} tags, seed ${SEED})`)
    const x = (n: number) => `${n.toFixed(2)}x`
    const { figures: p, loads: parserLoads } = await benchRuns(async () => ({ parser: await parserAlone(file) }))
    console.log(
      `historian parser alone        ${medianWithSpread(p.parser, fmt)}  (${(mib / (rows / median(p.parser))).toFixed(0)} MiB/s)  ${loadSpread(parserLoads)}`,
    )
    for (const dialect of dialects) {
      const url = dialect.url ?? `sqlite:${join(dir, 'import.db')}`
      const baseline = dialect.url ? 'raw COPY' : 'raw prepared insert'
      const { figures: f, loads } = await benchRuns(async () => {
        const raw = dialect.url ? await rawCopy(dialect.url, file, rows) : await rawSqlite(dir, file, rows)
        const shaped = dialect.url ? await rawCopyShaped(dialect.url, file, rows) : undefined
        const imported = await importInChild({ url, file, rows })
        const asRole = dialect.url ? await importInChild({ url, file, rows, asServiceRole: true }) : undefined
        return {
          raw,
          import: imported.rate,
          'import/raw': imported.rate / raw,
          'import rss': imported.memory.growthMiB,
          ...(shaped === undefined ? {} : { shaped, 'shaped/raw': shaped / raw, 'import/shaped': imported.rate / shaped }),
          ...(asRole === undefined ? {} : { role: asRole.rate, 'role/raw': asRole.rate / raw, 'role rss': asRole.memory.growthMiB }),
        }
      })
      console.log(`${dialect.name.padEnd(8)} ${loadSpread(loads)}`)
      console.log(`${dialect.name.padEnd(8)} ${baseline.padEnd(20)} ${medianWithSpread(f.raw!, fmt)}`)
      if (f.shaped)
        console.log(
          `${dialect.name.padEnd(8)} raw COPY, service's table shape ${medianWithSpread(f.shaped, fmt)}  (${medianWithSpread(f['shaped/raw']!, x)} of raw COPY)`,
        )
      console.log(
        `${dialect.name.padEnd(8)} historian import     ${medianWithSpread(f.import!, fmt)}  vs ${baseline} ${medianWithSpread(f['import/raw']!, x)}${f['import/shaped'] ? `  vs the shaped COPY ${medianWithSpread(f['import/shaped'], x)}` : ''}  peak RSS +${medianWithSpread(f['import rss']!, (n) => `${n.toFixed(1)} MiB`)}`,
      )
      if (f.role)
        console.log(
          `${dialect.name.padEnd(8)}   as the service role ${medianWithSpread(f.role, fmt)}  vs ${baseline} ${medianWithSpread(f['role/raw']!, x)}  peak RSS +${medianWithSpread(f['role rss']!, (n) => `${n.toFixed(1)} MiB`)}`,
        )
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

// `node --import tsx bench/historian.ts` runs it alone on SQLite (BENCH_DATABASE_URL adds a PostgreSQL database).
if (import.meta.url === `file://${process.argv[1]}` && process.env.BENCH_HISTORIAN_IMPORT !== undefined) {
  console.log(JSON.stringify(await importOnce(JSON.parse(process.env.BENCH_HISTORIAN_IMPORT) as ImportJob)))
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const dialects: Array<{ name: string; url?: string }> = [{ name: 'sqlite' }]
  if (process.env.BENCH_DATABASE_URL) dialects.push({ name: 'postgres', url: process.env.BENCH_DATABASE_URL })
  // BENCH_HISTORIAN_DIALECTS=postgres (or sqlite) runs one of them only.
  const only = process.env.BENCH_HISTORIAN_DIALECTS?.split(',')
  await benchHistorian(only === undefined ? dialects : dialects.filter((d) => only.includes(d.name)))
}
