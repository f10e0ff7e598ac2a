// Memory of moving 1 000 000 historian samples over the link (issue 26: ≤ +64 MiB on each side). Not part of the
// suite (no timing or memory thresholds in tests): run it by hand, machine quiet, and read the figures it prints:
//   TEST_DATABASE_URL=postgres://… SITEGRID_TEST_DIALECTS=postgres NODE_OPTIONS=--expose-gc \
//     node --import tsx test/run.ts src/modules/fleet/historian-chunks/test-memory-probe.ts
// The peaks are of the process (rss) and of the JavaScript heap, sampled after every chunk and every 20 ms; a full
// collection runs before the baseline, none during the run (the heap peak includes garbage not yet collected).
// Phase 1 reads the batch on the site as the uploader does (chunks, their JSON and SHA-256) without sending;
// phase 2 uploads it to the cloud's routes on loopback: both sides run in this one process, so its peak bounds each.
import assert from 'node:assert/strict'
import { it } from 'node:test'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { databaseUrlFor, harness, testDialects } from '../../../../test/harness.ts'
import { streamBatchSamples, type LinkSample } from '../../historian/link.ts'
import { cloudService, countRows, seedBatch, seedPlant, siteDatabase, SITE, startCloud } from './test-chunks-setup.ts'
import { uploadBatchSamples } from './uploader.ts'
import { sha256Hex } from './wire.ts'

const SERIES = Array.from({ length: 10 }, (_, i) => ({ instanceId: `ins_${i % 3}`, tagKey: `tag_${i}`, n: 100_000 }))
const MiB = 1024 * 1024

function watch(): { tick(): void; stop(): { rss: number; heap: number; external: number } } {
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  const base = process.memoryUsage()
  const peak = { rss: 0, heap: 0, external: 0 }
  const tick = () => {
    const m = process.memoryUsage()
    peak.rss = Math.max(peak.rss, m.rss - base.rss)
    peak.heap = Math.max(peak.heap, m.heapUsed - base.heapUsed)
    peak.external = Math.max(peak.external, m.external + m.arrayBuffers - base.external - base.arrayBuffers)
  }
  // better-sqlite3 answers synchronously: a loop over the site's pages alone may never let a timer run, so the
  // loops call tick() too.
  const timer = setInterval(tick, 20)
  return {
    tick,
    stop: () => {
      tick()
      clearInterval(timer)
      return { rss: peak.rss / MiB, heap: peak.heap / MiB, external: peak.external / MiB }
    },
  }
}

const show = (p: { rss: number; heap: number; external: number }) =>
  `rss +${p.rss.toFixed(1)} MiB, heap +${p.heap.toFixed(1)} MiB, external+arrayBuffers +${p.external.toFixed(1)} MiB`

it('1 000 000 samples over the link: peak memory above the baseline', { timeout: 3_600_000 }, async (t) => {
  const dialect = testDialects().includes('postgres') ? 'postgres' : 'sqlite'
  const h = await harness(t, dialect)
  const org = await h.createOrg()
  await seedPlant(h.handle.db, org.id, SITE, ['ins_0', 'ins_1', 'ins_2'])
  const siteUrl = await databaseUrlFor(t, 'sqlite')
  const site = await siteDatabase(t, org, siteUrl)
  await seedPlant(site.db, org.id, SITE, ['ins_0', 'ins_1', 'ins_2'])
  const total = await site.db.transaction().execute((trx) => seedBatch(trx, org.id, { id: 'bat_big', siteCode: SITE, series: SERIES }))
  assert.equal(total, 1_000_000)
  t.diagnostic(`gc before the baseline: ${typeof (globalThis as { gc?: unknown }).gc === 'function'}`)

  let w = watch()
  let read = 0
  for await (const c of streamBatchSamples(site.db, 'sqlite', org.id, 'bat_big', { chunkSize: 2000 })) {
    const samples = c.rows.map(
      (r): LinkSample => [String(r.instance_id), String(r.tag_key), Number(r.ts), r.value as number | null, r.text as string | null, Number(r.quality)],
    )
    sha256Hex(JSON.stringify(samples))
    read += samples.length
    w.tick()
  }
  const sitePeak = w.stop()
  assert.equal(read, total)
  t.diagnostic(`site, reading 1 000 000 samples in 2 000-sample chunks: ${show(sitePeak)}`)

  const chunks = cloudService(h)
  const { http, url } = await startCloud(t, chunks, org, { serverId: 'srv_probe', sites: [SITE] })
  w = watch()
  const progress = await uploadBatchSamples(http, site.db, 'sqlite', org.id, { id: 'bat_big', siteCode: SITE }, { chunkSize: 2000, onProgress: () => w.tick() })
  const bothPeak = w.stop()
  assert.equal(progress.samples, total)
  assert.equal((await countRows(h.handle.db, org.id)).points, total)
  t.diagnostic(
    `site + ${dialect} cloud in one process, uploading 1 000 000 samples (${progress.chunks} chunks, ${(progress.bytes / MiB).toFixed(1)} MiB of bodies): ${show(bothPeak)}`,
  )

  // Each side in a process of its own: the site's upload of another batch of the same size runs in a child process
  // (test-memory-site.ts), which reports its peaks; this process, now the cloud alone, watches its own. Twice: as it
  // runs, then with a full collection after every 10th chunk (what stays reachable: flat means no growth with the batch).
  for (const [n, gcEvery] of [
    [2, 0],
    [3, 10],
  ] as const) {
    const series = SERIES.map((s) => ({ ...s, tagKey: `${s.tagKey}.${n}` }))
    await site.db.transaction().execute((trx) => seedBatch(trx, org.id, { id: `bat_big${n}`, siteCode: SITE, series }))
    w = watch()
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(new URL('./test-memory-site.ts', import.meta.url))], {
      env: {
        ...process.env,
        PROBE_DB: siteUrl,
        PROBE_ORG: org.id,
        PROBE_BATCH: `bat_big${n}`,
        PROBE_SITE: SITE,
        PROBE_CLOUD: url,
        PROBE_GC_EVERY: String(gcEvery),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => {
      out += String(d)
    })
    await new Promise((resolve) => child.on('exit', resolve))
    const cloudPeak = w.stop()
    const reported = JSON.parse(out.trim().split('\n').pop()!) as {
      progress: { samples: number }
      peak: { rss: number; heap: number; external: number }
      retained: number[]
    }
    assert.equal(reported.progress.samples, total)
    const sitePeak = { rss: reported.peak.rss / MiB, heap: reported.peak.heap / MiB, external: reported.peak.external / MiB }
    const kept = reported.retained.map((b) => (b / MiB).toFixed(1)).join(', ')
    t.diagnostic(
      `separate processes, 1 000 000 samples${gcEvery > 0 ? `, site collected every ${gcEvery} chunks (reachable after chunks 100, 200, …: +${kept} MiB)` : ''}: ` +
        `site ${show(sitePeak)}; ${dialect} cloud ${show(cloudPeak)}`,
    )
  }
})
