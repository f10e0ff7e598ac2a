// Issue 10: export and import an organisation with N historian samples and M alarms, against a plain dump and
// restore of the same tables through the driver in the same run, with the peak memory.
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { CLI_ACTOR } from '../src/auth/principal.ts'
import { systemClock } from '../src/clock.ts'
import { connectDatabase, type DatabaseHandle } from '../src/db/connect.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { createOrgsService, type Org } from '../src/modules/orgs/service.ts'
import { createSitesService } from '../src/modules/sites/service.ts'
import { createTenantTransferService } from '../src/modules/tenant-transfer/service.ts'
import { ratio } from './lib.ts'

const SAMPLES = Number(process.env.BENCH_TRANSFER_SAMPLES ?? 1_000_000)
const ALARMS = Number(process.env.BENCH_TRANSFER_ALARMS ?? 10_000)
const TABLES = ['sites', 'historian_batches', 'historian_samples', 'alarms'] as const

async function open(url: string | undefined): Promise<DatabaseHandle> {
  const handle = await connectDatabase(url ?? `sqlite:${join(mkdtempSync(join(tmpdir(), 'sitegrid-bench-')), 'transfer.db')}`, { poolSize: 4 })
  await migrateToLatest(handle.db)
  return handle
}

async function seed(handle: DatabaseHandle, org: Org): Promise<void> {
  const db = handle.db
  const now = Date.now()
  await createSitesService({ handle, clock: systemClock, dependents: [] }).create(org.id, CLI_ACTOR, { code: 'BENCH', name: 'Bench plant' })
  await db.insertInto('historian_batches').values({
    org_id: org.id, site_code: 'BENCH', id: 'bat_BENCH', format: 'long', status: 'complete', rows_read: SAMPLES, samples_stored: SAMPLES,
    rejected_count: 0, collision_count: 0, replaced_count: 0, bytes_read: 0, bytes_total: null, first_ts: now, last_ts: now + SAMPLES,
    tags: '[]', report: '{}', options: '{}', trend_sha256: '0'.repeat(64), mapping_sha256: '0'.repeat(64), trend_name: null, is_forced: 0,
    error: null, created_by: 'bench', created_at: now, updated_at: now, completed_at: now,
  }).execute()
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < SAMPLES; i += 2000) {
      const rows = Array.from({ length: Math.min(2000, SAMPLES - i) }, (_, j) => ({
        org_id: org.id, site_code: 'BENCH', instance_id: `PUMP-${(i + j) % 50}`, tag_key: 'flow', ts: now + i + j,
        value: Math.sin(i + j) * 100, text: null, quality: 192, batch_id: 'bat_BENCH',
      }))
      await trx.insertInto('historian_samples').values(rows).execute()
    }
    for (let i = 0; i < ALARMS; i += 1000) {
      const rows = Array.from({ length: Math.min(1000, ALARMS - i) }, (_, j) => ({
        org_id: org.id, site_code: 'BENCH', id: `alm_${String(i + j).padStart(8, '0')}`, instance_id: `PUMP-${(i + j) % 50}`, condition: 'HI',
        priority: 'high', message: 'flow high', value: 12.5, limit_value: 10, state: 'normal', is_active: 0, is_acknowledged: 1,
        is_out_of_service: 0, shelved_until: null, active_key: null, activation_count: 1, raised_at: now, last_event_at: now,
        changed_at: now + i + j, created_at: now, version: 1,
      }))
      await trx.insertInto('alarms').values(rows).execute()
    }
  })
}

/** The baseline: SELECT every row of the same tables through the driver, JSON-encode them, then INSERT them back. */
async function plainDumpRestore(source: DatabaseHandle, target: DatabaseHandle, orgId: string): Promise<{ dumpMs: number; restoreMs: number }> {
  let t = performance.now()
  const dump: Record<string, string[]> = {}
  for (const table of TABLES) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)} where org_id = ${orgId}`.execute(source.db)
    dump[table] = rows.map((r) => JSON.stringify(r))
  }
  const dumpMs = performance.now() - t
  t = performance.now()
  await target.db.transaction().execute(async (trx) => {
    for (const table of TABLES) {
      const rows = dump[table]!.map((l) => JSON.parse(l) as Record<string, unknown>)
      const width = Object.keys(rows[0] ?? { a: 1 }).length
      for (let i = 0; i < rows.length; i += Math.floor(30_000 / width)) {
        await sql`insert into ${sql.table(table)} (${sql.join(Object.keys(rows[0]!).map((c) => sql.ref(c)))}) values ${sql.join(rows.slice(i, i + Math.floor(30_000 / width)).map((r) => sql`(${sql.join(Object.values(r))})`))}`.execute(trx)
      }
    }
  })
  return { dumpMs, restoreMs: performance.now() - t }
}

export async function benchTenantTransfer(dialects: Array<{ name: string; url?: () => Promise<string> }>): Promise<void> {
  for (const dialect of dialects) {
    const source = await open(await dialect.url?.())
    const slug = `bench-${randomBytes(3).toString('hex')}`
    const org = await createOrgsService({ handle: source, clock: systemClock }).provision(slug)
    await seed(source, org)
    let peak = process.memoryUsage().rss
    const sample = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 20)
    const before = process.memoryUsage().rss

    const plainTarget = await open(await dialect.url?.())
    await createOrgsService({ handle: plainTarget, clock: systemClock }).provision(slug, slug, org.id)
    const plain = await plainDumpRestore(source, plainTarget, org.id)
    await plainTarget.close()
    const plainPeak = peak - before
    peak = process.memoryUsage().rss

    const transfer = (handle: DatabaseHandle) => createTenantTransferService({ handle, clock: systemClock, mode: 'site', sites: createSitesService({ handle, clock: systemClock, dependents: [] }), maxPackageBytes: 8 * 1024 ** 3 })
    let t = performance.now()
    const chunks: Buffer[] = []
    for await (const chunk of await transfer(source).exportPackage(org, null)) chunks.push(chunk as Buffer)
    const exportMs = performance.now() - t
    const target = await open(await dialect.url?.())
    await createOrgsService({ handle: target, clock: systemClock }).provision(slug, slug, org.id)
    t = performance.now()
    await transfer(target).stage(org, CLI_ACTOR, (async function* () { yield* chunks })())
    const stageMs = performance.now() - t
    t = performance.now()
    await transfer(target).applyStaged(org, CLI_ACTOR, { force: false, dryRun: false })
    const applyMs = performance.now() - t
    clearInterval(sample)
    const bytes = chunks.reduce((n, c) => n + c.length, 0)
    console.log(`${dialect.name.padEnd(8)} tenant transfer ${SAMPLES} samples + ${ALARMS} alarms: package ${(bytes / 1e6).toFixed(1)} MB gzip`)
    console.log(`${dialect.name.padEnd(8)}   export ${exportMs.toFixed(0)} ms vs plain dump ${plain.dumpMs.toFixed(0)} ms (${ratio(plain.dumpMs, exportMs)} of plain speed)`)
    console.log(`${dialect.name.padEnd(8)}   stage+check ${stageMs.toFixed(0)} ms, apply ${applyMs.toFixed(0)} ms vs plain restore ${plain.restoreMs.toFixed(0)} ms (${ratio(plain.restoreMs, stageMs + applyMs)} of plain speed)`)
    console.log(`${dialect.name.padEnd(8)}   peak RSS growth: transfer ${((peak - before) / 2 ** 20).toFixed(0)} MiB (package held in memory by the bench: ${(bytes / 2 ** 20).toFixed(0)} MiB), plain ${(plainPeak / 2 ** 20).toFixed(0)} MiB`)
    await target.close()
    await source.close()
  }
}
