// Issue 30: live push of BENCH_LIVE_SAMPLES (1 000 000) samples in batches of BENCH_LIVE_BATCH (1 000), through the
// live ingestion service (the line format read, screened, stored with its batch id), BENCH_LIVE_CONCURRENCY (4)
// gateways pushing at once, against the historian import of the same number of samples (bench/historian.ts) in the
// same run, on both databases; and the peak RSS growth of the pushing process (the figure: ≥ 0.5× the import's
// samples per second, memory ≤ +64 MiB). Each side runs in a process of its own, like the import bench; BENCH_RUNS
// times (median, spread, load).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import { systemClock } from '../src/clock.ts'
import { connectDatabase } from '../src/db/connect.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { withOrgScope } from '../src/db/tenant-scope.ts'
import type { Actor } from '../src/identity.ts'
import type { OrgId } from '../src/ids.ts'
import { findConfigVersion } from '../src/modules/edges/store.ts'
import { createLiveIngest } from '../src/modules/historian/service/live.ts'
import { readLines } from '../src/modules/historian/service/live-samples.ts'
import { createOrgsService } from '../src/modules/orgs/service.ts'
import { fmt, generate, importInChild, perSecond, rssWatch, timed } from './historian.ts'
import { benchRuns, loadSpread, medianWithSpread } from './lib.ts'

const INSTANCES = 10
const TAGS_PER_INSTANCE = 10
const TAGS = INSTANCES * TAGS_PER_INSTANCE
const SEED = 9

interface LiveJob {
  url: string
  samples: number
  batch: number
  concurrency: number
}
type LiveResult = Awaited<ReturnType<typeof pushOnce>>

/** The line-format body of batch `n`: TAGS tags a timestamp, one timestamp a second, values from a fixed LCG. */
function body(n: number, batch: number, start: number): string {
  let x = SEED + n
  let text = ''
  for (let i = n * batch; i < (n + 1) * batch; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648
    const tag = i % TAGS
    text += `ins_${tag % INSTANCES},tag_${tag},${start + Math.floor(i / TAGS) * 1000},${(x / 1e6).toFixed(3)}\n`
  }
  return text
}

async function pushOnce({ url, samples, batch, concurrency }: LiveJob) {
  const handle = await connectDatabase(url, { poolSize: concurrency + 1, statementTimeoutMs: 600_000 })
  await migrateToLatest(handle.db)
  if (handle.dialect === 'postgres') await sql`vacuum historian_points, historian_series, historian_batches`.execute(handle.db)
  if (handle.dialect === 'postgres') await sql`checkpoint`.execute(handle.db)
  const org = await createOrgsService({ handle, clock: systemClock }).provision(`bench-live-${Date.now().toString(36)}`)
  const orgId = org.id as OrgId
  const now = systemClock.now()
  await handle.db
    .insertInto('sites')
    .values({ org_id: orgId, code: 'bench', name: 'Bench', description: null, location: null, time_zone: 'UTC', status: 0, created_at: now, updated_at: now })
    .execute()
  const tagMappings = Array.from({ length: INSTANCES }, (_, i) => ({
    instanceId: `ins_${i}`,
    tagMappings: Object.fromEntries(Array.from({ length: TAGS_PER_INSTANCE }, (_, t) => [`tag_${t * INSTANCES + i}`, `N7:${t}`])),
  }))
  const live = createLiveIngest({
    handle,
    clock: systemClock,
    sites: { require: async (_o, code) => ({ code }) },
    instances: { listTagMappings: async () => tagMappings },
    // The route's per-push read: the site's equipment version (the tag mappings are read again only when it moves).
    versions: { configVersion: async (o, code) => (await findConfigVersion(handle.db, o, code)) ?? 0 },
    limits: { maxSamples: batch, maxSkewMs: 60_000, maxAgeMs: 30 * 86_400_000 },
  })
  // The samples end now: every one lies in the clock-skew window.
  const start = now - Math.ceil(samples / TAGS) * 1000
  const batches = Math.ceil(samples / batch)
  let next = 0
  // Each gateway its own key: its pushes of a window share one open batch, as a real gateway's do (open-batch.ts).
  const gateway = async (_: unknown, g: number) => {
    const actor: Actor = { kind: 'apiKey', subject: `bench-gateway-${g}`, role: 'member' }
    for (let n = next++; n < batches; n = next++) {
      const answer = await live.push(orgId, actor, 'bench', `gw-${n}`, readLines(body(n, batch, start)))
      if (answer.stored !== batch) throw new Error(`batch ${n}: stored ${answer.stored} of ${batch} (${JSON.stringify(answer.refusals.slice(0, 3))})`)
    }
  }
  const rss = rssWatch()
  const { ms, cpuMs } = await timed(() => withOrgScope(orgId, () => Promise.all(Array.from({ length: concurrency }, gateway))))
  const memory = rss.stop()
  await handle.db.deleteFrom('orgs').where('id', '=', orgId).execute()
  await handle.close()
  return { rate: perSecond(batches * batch, ms), cpuUsPerSample: (cpuMs * 1000) / (batches * batch), memory }
}

/** The pushes in a process of their own (this file, BENCH_LIVE_JOB naming the job): its RSS growth is theirs alone. */
async function pushInChild(job: LiveJob): Promise<LiveResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    env: { ...process.env, BENCH_LIVE_JOB: JSON.stringify(job) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    out += text
  })
  const [code] = (await once(child, 'exit')) as [number | null]
  if (code !== 0) throw new Error(`the live push process exited with ${code}`)
  return JSON.parse(out) as LiveResult
}

export async function benchLiveSamples(dialects: Array<{ name: string; url?: string }>): Promise<void> {
  const samples = Number(process.env.BENCH_LIVE_SAMPLES ?? 1_000_000)
  const batch = Number(process.env.BENCH_LIVE_BATCH ?? 1000)
  const concurrency = Number(process.env.BENCH_LIVE_CONCURRENCY ?? 4)
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-bench-live-'))
  try {
    const file = join(dir, 'long.csv')
    await generate(file, samples)
    console.log(`# historian live push: ${samples.toLocaleString('en')} samples in batches of ${batch}, ${concurrency} gateways at once, ${TAGS} tags`)
    for (const dialect of dialects) {
      const url = dialect.url ?? `sqlite:${join(dir, `live-${dialect.name}.db`)}`
      const { figures, loads } = await benchRuns(async () => {
        const imported = await importInChild({ url, file, rows: samples })
        const pushed = await pushInChild({ url, samples, batch, concurrency })
        return {
          imported: imported.rate,
          pushed: pushed.rate,
          ratio: pushed.rate / imported.rate,
          rss: pushed.memory.growthMiB,
          importCpu: imported.cpuUsPerSample,
          pushCpu: pushed.cpuUsPerSample,
          cpuRatio: imported.cpuUsPerSample / pushed.cpuUsPerSample,
        }
      })
      console.log(`${dialect.name.padEnd(8)} ${loadSpread(loads)}`)
      console.log(`${dialect.name.padEnd(8)} historian import     ${medianWithSpread(figures.imported, fmt)}`)
      console.log(
        `${dialect.name.padEnd(8)} live push            ${medianWithSpread(figures.pushed, fmt)}  vs the import ${medianWithSpread(figures.ratio, (n) => `${n.toFixed(2)}x`)}  peak RSS +${medianWithSpread(figures.rss, (n) => `${n.toFixed(1)} MiB`)}`,
      )
      // Beside the figure, less moved by other work on the machine: the CPU time (user + system, all threads) of each
      // side's process per sample, and the import's over the push's (the push's share of the import's speed, were both
      // bound by their own CPU). PostgreSQL: the client's only, the server's is not counted.
      const us = (n: number) => `${n.toFixed(2)} µs`
      console.log(
        `${dialect.name.padEnd(8)} CPU a sample         push ${medianWithSpread(figures.pushCpu, us)}  import ${medianWithSpread(figures.importCpu, us)}  import/push ${medianWithSpread(figures.cpuRatio, (n) => `${n.toFixed(2)}x`)}`,
      )
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}` && process.env.BENCH_LIVE_JOB !== undefined) {
  console.log(JSON.stringify(await pushOnce(JSON.parse(process.env.BENCH_LIVE_JOB) as LiveJob)))
}
