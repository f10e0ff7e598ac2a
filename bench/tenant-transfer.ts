// Issue 10: export and import an organisation with N historian samples and M alarms, against a plain dump and
// restore of the same tables through the driver in the same run, with the peak memory of each step. The service runs
// first (package written to a file and staged back from it) so the baseline's in-memory dump cannot inflate its figures.
import { randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs'
import { Readable, Transform } from 'node:stream'
import { Worker } from 'node:worker_threads'
import { pipeline } from 'node:stream/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { CLI_ACTOR, type Org } from '../src/identity.ts'
import { systemClock } from '../src/clock.ts'
import { connectDatabase, type DatabaseHandle } from '../src/db/connect.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import type { OrgId } from '../src/ids.ts'
import { ensureSeries, seriesKey } from '../src/modules/historian/store/queries.ts'
import { historianStoredParts } from '../src/modules/historian/transfer.ts'
import { createOrgsService } from '../src/modules/orgs/service.ts'
import { createSitesService } from '../src/modules/sites/service.ts'
import { createTenantTransferService } from '../src/modules/tenant-transfer/service.ts'
import { benchRuns, loadSpread, median, medianWithSpread } from './lib.ts'

const SAMPLES = Number(process.env.BENCH_TRANSFER_SAMPLES ?? 1_000_000)
const ALARMS = Number(process.env.BENCH_TRANSFER_ALARMS ?? 10_000)
const TABLES = ['sites', 'historian_batches', 'historian_series', 'historian_points', 'alarms'] as const

async function open(url: string | undefined): Promise<DatabaseHandle> {
  const handle = await connectDatabase(url ?? `sqlite:${join(mkdtempSync(join(tmpdir(), 'sitegrid-bench-')), 'transfer.db')}`, { poolSize: 4 })
  await migrateToLatest(handle.db)
  return handle
}

async function seed(handle: DatabaseHandle, org: Org): Promise<void> {
  const db = handle.db
  const now = Date.now()
  await createSitesService({ handle, clock: systemClock, dependents: [] }).create(org.id, CLI_ACTOR, { code: 'BENCH', name: 'Bench plant' })
  await db
    .insertInto('historian_batches')
    .values({
      org_id: org.id,
      site_code: 'BENCH',
      id: 'bat_BENCH',
      format: 'long',
      status: 'complete',
      rows_read: SAMPLES,
      samples_stored: SAMPLES,
      rejected_count: 0,
      collision_count: 0,
      replaced_count: 0,
      bytes_read: 0,
      bytes_total: null,
      first_ts: now,
      last_ts: now + SAMPLES,
      tags: '[]',
      report: '{}',
      options: '{}',
      trend_sha256: '0'.repeat(64),
      mapping_sha256: '0'.repeat(64),
      trend_name: null,
      is_forced: 0,
      error: null,
      created_by: 'bench',
      created_at: now,
      updated_at: now,
      completed_at: now,
    })
    .execute()
  await db.transaction().execute(async (trx) => {
    // 50 series (one per pump), the samples keyed by series id and time (migration 1600).
    const series = await ensureSeries(
      trx,
      org.id as OrgId,
      'BENCH',
      Array.from({ length: 50 }, (_, p) => ({ instanceId: `PUMP-${p}`, tagKey: 'flow' })),
    )
    for (let i = 0; i < SAMPLES; i += 2000) {
      const rows = Array.from({ length: Math.min(2000, SAMPLES - i) }, (_, j) => ({
        org_id: org.id,
        series_id: series.get(seriesKey(`PUMP-${(i + j) % 50}`, 'flow'))!,
        ts: now + i + j,
        value: Math.sin(i + j) * 100,
        text: null,
        quality: 192,
        batch_id: 'bat_BENCH',
      }))
      await trx.insertInto('historian_points').values(rows).execute()
    }
    for (let i = 0; i < ALARMS; i += 1000) {
      const rows = Array.from({ length: Math.min(1000, ALARMS - i) }, (_, j) => ({
        org_id: org.id,
        site_code: 'BENCH',
        id: `alm_${String(i + j).padStart(8, '0')}`,
        instance_id: `PUMP-${(i + j) % 50}`,
        condition: 'HI',
        priority: 'high',
        message: 'flow high',
        value: 12.5,
        limit_value: 10,
        state: 'normal',
        is_active: 0,
        is_acknowledged: 1,
        is_out_of_service: 0,
        shelved_until: null,
        active_key: null,
        activation_count: 1,
        raised_at: now,
        last_event_at: now,
        changed_at: now + i + j,
        created_at: now,
        version: 1,
      }))
      await trx.insertInto('alarms').values(rows).execute()
    }
  })
}

// The process's RSS is sampled every 5 ms by a worker thread (RSS is process-wide, and the worker's event loop never
// starves, unlike the main thread's while better-sqlite3 answers synchronously); the peak goes to shared memory.
const peakRssKiB = new Int32Array(new SharedArrayBuffer(4))
function startRssSampler(): Worker {
  const worker = new Worker(
    `
  const { workerData } = require('node:worker_threads')
  const peak = workerData
  setInterval(() => { const kib = Math.round(process.memoryUsage.rss() / 1024); if (kib > Atomics.load(peak, 0)) Atomics.store(peak, 0, kib) }, 5)
`,
    { eval: true, workerData: peakRssKiB },
  )
  worker.unref()
  return worker
}

/**
 * Peak growth over the step's start (after a GC when --expose-gc): RSS from the sampler thread; V8 heap from a 10 ms
 * timer on the main thread plus reads at chosen points (`mark`), since that timer may starve during a step.
 */
function memoryWatch() {
  ;(globalThis as { gc?: () => void }).gc?.()
  const start = process.memoryUsage()
  Atomics.store(peakRssKiB, 0, Math.round(start.rss / 1024))
  let heap = start.heapUsed
  const mark = () => {
    heap = Math.max(heap, process.memoryUsage().heapUsed)
  }
  const timer = setInterval(mark, 10)
  return {
    mark,
    stop: () => {
      mark()
      clearInterval(timer)
      const rss = Math.max(Atomics.load(peakRssKiB, 0) * 1024, process.memoryUsage().rss)
      return { rss: rss - start.rss, heap: heap - start.heapUsed }
    },
  }
}

/** Passes chunks through, reading the heap at each (so a step's heap peak is read even if the timer starves). */
const marking = (mark: () => void) =>
  new Transform({
    transform(chunk, _enc, done) {
      mark()
      done(null, chunk)
    },
  })

/** The baseline: SELECT every row of the same tables through the driver, JSON-encode them, then INSERT them back. */
async function plainDumpRestore(
  source: DatabaseHandle,
  target: DatabaseHandle,
  orgId: string,
  mark: () => void,
): Promise<{ dumpMs: number; restoreMs: number }> {
  let t = performance.now()
  const dump: Record<string, string[]> = {}
  for (const table of TABLES) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)} where org_id = ${orgId}`.execute(source.db)
    dump[table] = rows.map((r) => JSON.stringify(r))
  }
  const dumpMs = performance.now() - t
  mark() // the whole dump is in memory here
  t = performance.now()
  await target.db.transaction().execute(async (trx) => {
    for (const table of TABLES) {
      const rows = dump[table]!.map((l) => JSON.parse(l) as Record<string, unknown>)
      const width = Object.keys(rows[0] ?? { a: 1 }).length
      for (let i = 0; i < rows.length; i += Math.floor(30_000 / width)) {
        await sql`insert into ${sql.table(table)} (${sql.join(Object.keys(rows[0]!).map((c) => sql.ref(c)))}) values ${sql.join(rows.slice(i, i + Math.floor(30_000 / width)).map((r) => sql`(${sql.join(Object.values(r))})`))}`.execute(
          trx,
        )
      }
    }
  })
  return { dumpMs, restoreMs: performance.now() - t }
}

export async function benchTenantTransfer(dialects: Array<{ name: string; url?: () => Promise<string> }>): Promise<void> {
  const rssSampler = startRssSampler()
  try {
    for (const dialect of dialects) {
      const { figures: f, loads } = await benchRuns(() => benchOne(dialect))
      const ms = (n: number) => `${n.toFixed(0)} ms`
      const x = (n: number) => `${n.toFixed(2)}x`
      const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`
      console.log(
        `${dialect.name.padEnd(8)} tenant transfer ${SAMPLES} samples + ${ALARMS} alarms: package ${(median(f.bytes) / 1e6).toFixed(1)} MB gzip; ${loadSpread(loads)}`,
      )
      console.log(
        `${dialect.name.padEnd(8)}   export ${medianWithSpread(f.exportMs, ms)} vs plain dump ${medianWithSpread(f.dumpMs, ms)} (${medianWithSpread(f.exportSpeed, x)} of plain speed)`,
      )
      console.log(
        `${dialect.name.padEnd(8)}   stage+check ${medianWithSpread(f.stageMs, ms)}, apply ${medianWithSpread(f.applyMs, ms)} vs plain restore ${medianWithSpread(f.restoreMs, ms)} (${medianWithSpread(f.importSpeed, x)} of plain speed)`,
      )
      console.log(
        `${dialect.name.padEnd(8)}   peak growth over the step's start (median): export heap +${mib(median(f.exportHeap))} RSS +${mib(median(f.exportRss))}; stage+apply heap +${mib(median(f.importHeap))} RSS +${mib(median(f.importRss))}; plain dump+restore heap +${mib(median(f.plainHeap))} RSS +${mib(median(f.plainRss))}`,
      )
    }
  } finally {
    await rssSampler.terminate()
  }
}

async function benchOne(dialect: { name: string; url?: () => Promise<string> }) {
  const source = await open(await dialect.url?.())
  const slug = `bench-${randomBytes(3).toString('hex')}`
  const org = await createOrgsService({ handle: source, clock: systemClock }).provision(slug)
  await seed(source, org)
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-bench-pkg-'))
  const pkgPath = join(dir, 'package.jsonl.gz')

  // The service first, before the baseline has held any rows in this process: the package goes to a file and is
  // staged back from it (nothing held by the bench), with RSS and heap sampled every 10 ms while each step runs.
  const transfer = (handle: DatabaseHandle) =>
    createTenantTransferService({
      handle,
      clock: systemClock,
      mode: 'site',
      baseDomain: 'sitegrid.bench',
      sites: createSitesService({ handle, clock: systemClock, dependents: [] }),
      storedParts: historianStoredParts,
      maxPackageBytes: 8 * 1024 ** 3,
      maxInflatedBytes: 64 * 1024 ** 3,
    })
  const exportWatch = memoryWatch()
  let t = performance.now()
  await pipeline(Readable.from(await transfer(source).exportPackage(org, null)), marking(exportWatch.mark), createWriteStream(pkgPath))
  const exportMs = performance.now() - t
  const exportMemory = exportWatch.stop()
  const target = await open(await dialect.url?.())
  await createOrgsService({ handle: target, clock: systemClock }).provision(slug, slug, org.id)
  const importWatch = memoryWatch()
  t = performance.now()
  await transfer(target).stage(org, CLI_ACTOR, createReadStream(pkgPath, { highWaterMark: 1 << 20 }).pipe(marking(importWatch.mark)))
  const stageMs = performance.now() - t
  t = performance.now()
  await transfer(target).applyStaged(org, CLI_ACTOR, { force: false, dryRun: false })
  const applyMs = performance.now() - t
  const importMemory = importWatch.stop()
  const bytes = statSync(pkgPath).size
  rmSync(dir, { recursive: true, force: true })

  const plainTarget = await open(await dialect.url?.())
  await createOrgsService({ handle: plainTarget, clock: systemClock }).provision(slug, slug, org.id)
  const plainWatch = memoryWatch()
  const plain = await plainDumpRestore(source, plainTarget, org.id, plainWatch.mark)
  const plainMemory = plainWatch.stop()
  await plainTarget.close()

  await target.close()
  await source.close()
  return {
    bytes,
    exportMs,
    dumpMs: plain.dumpMs,
    exportSpeed: plain.dumpMs / exportMs,
    stageMs,
    applyMs,
    restoreMs: plain.restoreMs,
    importSpeed: plain.restoreMs / (stageMs + applyMs),
    exportHeap: exportMemory.heap,
    exportRss: exportMemory.rss,
    importHeap: importMemory.heap,
    importRss: importMemory.rss,
    plainHeap: plainMemory.heap,
    plainRss: plainMemory.rss,
  }
}
