// The site side of the memory probe (test-memory-probe.ts) in a process of its own: uploads a batch from the SQLite
// file it is given to the cloud at the URL it is given, and prints its own memory peaks above its baseline as JSON.
import { connectDatabase } from '../../../db/connect.ts'
import { createLinkHttp } from '../agent/http.ts'
import { uploadBatchSamples } from './uploader.ts'

const { PROBE_DB, PROBE_ORG, PROBE_BATCH, PROBE_SITE, PROBE_CLOUD } = process.env
const handle = await connectDatabase(PROBE_DB!, { poolSize: 1 })
const http = createLinkHttp({ cloudUrl: PROBE_CLOUD!, credential: 'slk_srv_probe_x', env: {}, timeoutMs: 120_000 })
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
const timer = setInterval(tick, 20)
// PROBE_GC_EVERY=n: a full collection after every n-th chunk, and what stays reachable after it every 100 chunks.
const every = Number(process.env.PROBE_GC_EVERY ?? 0)
const retained: number[] = []
const onProgress = (p: { chunks: number }) => {
  if (every > 0 && gc !== undefined && p.chunks % every === 0) {
    gc()
    const m = process.memoryUsage()
    if (p.chunks % 100 === 0) retained.push(m.heapUsed + m.external + m.arrayBuffers - base.heapUsed - base.external - base.arrayBuffers)
  }
  tick()
}
const progress = await uploadBatchSamples(http, handle.db, 'sqlite', PROBE_ORG!, { id: PROBE_BATCH!, siteCode: PROBE_SITE! }, { chunkSize: 2000, onProgress })
tick()
clearInterval(timer)
await http.close()
await handle.close()
process.stdout.write(`${JSON.stringify({ progress, peak, retained })}\n`)
