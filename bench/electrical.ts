// Issue 7: a 50 000-node network loaded through the API (PUT …/electrical/network), then an island query and a
// supply-path query answered by the server (database read + graph build + walk + JSON), each reported against the
// same graph walked in memory from plain arrays in the same run, and against the walk alone on the indexed graph.
import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app.ts'
import { CLI_ACTOR } from '../src/identity.ts'
import { systemClock } from '../src/clock.ts'
import { loadConfig } from '../src/config/load.ts'
import { connectDatabase, type DatabaseHandle } from '../src/db/connect.ts'
import type { ElectricalEdgesTable, ElectricalNodesTable } from '../src/db/schema.ts'
import type { OrgId } from '../src/ids.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { createLogger } from '../src/http/logger.ts'
import { createApiKeysService } from '../src/modules/api-keys/service.ts'
import { nodeRow } from '../src/modules/electrical/rows.ts'
import type { CreateNodeInput, EdgeInput } from '../src/modules/electrical/schemas.ts'
import { insertEdges, insertNodes } from '../src/modules/electrical/store.ts'
import { buildGraph, findIslands, findSupplyPaths } from '../src/modules/electrical/topology.ts'
import { createOrgsService } from '../src/modules/orgs/service.ts'
import { BENCH_RUNS, benchRuns, loadNow, loadSpread, median, medianWithSpread, ratio } from './lib.ts'

interface BenchNode {
  id: string
  name: string
  nodeType: number
  ratedVoltageV?: number
}
interface BenchEdge {
  sourceId: string
  targetId: string
  edgeType: number
}

/**
 * A plant-like network of `size` nodes: 4 grid infeeds, each feeding a tree of switchboards, breakers and loads
 * (fan-out 4), one ring closed per 1000 nodes, and 1 % of nodes left unconnected (spares). Deterministic.
 */
export function plantNetwork(size: number): { nodes: BenchNode[]; edges: BenchEdge[]; deepest: string } {
  const nodes: BenchNode[] = []
  const edges: BenchEdge[] = []
  const id = (i: number) => `N${String(i).padStart(6, '0')}`
  for (let i = 0; i < size; i++) {
    const spare = i % 100 === 99
    const nodeType = i < 4 ? 0 : spare ? 10 : [3, 5, 4, 5, 8, 10][i % 6]!
    nodes.push({ id: id(i), name: `Node ${i}`, nodeType, ratedVoltageV: 415 })
    if (i >= 4 && !spare) {
      let parent = Math.floor((i - 4) / 4)
      if (parent % 100 === 99) parent -= 1
      edges.push({ sourceId: id(parent), targetId: id(i), edgeType: 0 })
    }
    if (i > 1000 && i % 1000 === 500) edges.push({ sourceId: id(i), targetId: id(i - 7), edgeType: 4 })
  }
  let deepest = size - 1
  while (deepest % 100 === 99) deepest--
  return { nodes, edges, deepest: id(deepest) }
}

/** The baseline: components and one BFS over adjacency lists built from the arrays, no validation, no typed arrays. */
function inMemory(nodes: readonly BenchNode[], edges: readonly BenchEdge[], from: string) {
  const adjacency = new Map<string, string[]>()
  for (const n of nodes) adjacency.set(n.id, [])
  for (const e of edges) {
    adjacency.get(e.sourceId)!.push(e.targetId)
    adjacency.get(e.targetId)!.push(e.sourceId)
  }
  const seen = new Set<string>()
  let islands = 0
  for (const n of nodes) {
    if (seen.has(n.id)) continue
    islands++
    const stack = [n.id]
    seen.add(n.id)
    while (stack.length > 0)
      for (const v of adjacency.get(stack.pop()!)!)
        if (!seen.has(v)) {
          seen.add(v)
          stack.push(v)
        }
  }
  const parent = new Map<string, string | null>([[from, null]])
  const queue = [from]
  for (let head = 0; head < queue.length; head++)
    for (const v of adjacency.get(queue[head]!)!)
      if (!parent.has(v)) {
        parent.set(v, queue[head]!)
        queue.push(v)
      }
  return { islands, reached: parent.size }
}

/** Each run's time after a warm-up (`ms`: their median, `times`: all of them). */
async function timeIt<T>(runs: number, fn: () => Promise<T> | T): Promise<{ ms: number; times: number[]; result: T }> {
  let result = await fn() // warm-up
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint()
    result = await fn()
    times.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  return { ms: median(times), times, result }
}
const ms = (n: number) => `${n.toFixed(1)} ms`

export async function benchElectrical(
  dialects: Array<{ name: string; url?: string }> = [{ name: 'sqlite' }],
  size = 50_000,
  streamSize = Number(process.env.BENCH_ELECTRICAL_STREAM_NODES ?? 100_000),
): Promise<void> {
  const network = plantNetwork(size)
  const runs = Math.max(BENCH_RUNS, 5)
  console.log(`# electrical: medians of ${runs} runs (min–max); ${loadSpread([loadNow()])} at the start`)
  const walk = await timeIt(runs, () => inMemory(network.nodes, network.edges, network.deepest))
  const graph = buildGraph(network.nodes, network.edges)
  const islandsWalk = await timeIt(runs, () => findIslands(graph))
  const pathWalk = await timeIt(runs, () => findSupplyPaths(graph, network.deepest))
  console.log(
    `electrical ${size} nodes / ${network.edges.length} edges: in-memory arrays (islands + one BFS) ${medianWithSpread(walk.times, ms)}; indexed graph: islands ${medianWithSpread(islandsWalk.times, ms)}, supply paths ${medianWithSpread(pathWalk.times, ms)}`,
  )
  for (const dialect of dialects) {
    const databaseUrl = dialect.url ?? `sqlite:${join(mkdtempSync(join(tmpdir(), 'sitegrid-bench-')), 'bench.db')}`
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
    const minted = await createApiKeysService({ handle, clock: systemClock, keySecret: config.keySecret }).mint(org.id, CLI_ACTOR, {
      role: 'owner',
      name: 'bench',
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    })
    const app = await buildApp({ config, handle, clock: systemClock, log: createLogger('warn') })
    const headers = { host: `${org.slug}.localhost`, 'x-api-key': minted.plaintext }
    try {
      const site = await app.inject({ method: 'POST', url: '/api/sites', headers, payload: { code: 'BENCH', name: 'Bench plant' } })
      if (site.statusCode !== 201) throw new Error(`site: ${site.statusCode} ${site.body}`)
      const base = '/api/sites/BENCH/electrical'
      const body = JSON.stringify({ nodes: network.nodes, edges: network.edges })
      // The PUT replaces the network: BENCH_RUNS loads of the same document.
      const { figures: put } = await benchRuns(async () => {
        const loadStart = process.hrtime.bigint()
        const loaded = await app.inject({ method: 'PUT', url: `${base}/network`, headers: { ...headers, 'content-type': 'application/json' }, payload: body })
        if (loaded.statusCode !== 200) throw new Error(`network load: ${loaded.statusCode} ${loaded.body.slice(0, 300)}`)
        return { ms: Number(process.hrtime.bigint() - loadStart) / 1e6 }
      })
      const get = async (url: string) => {
        const res = await app.inject({ method: 'GET', url, headers })
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 300)}`)
        return res.json() as Record<string, unknown>
      }
      const islands = await timeIt(runs, () => get(`${base}/topology/islands`))
      const path = await timeIt(runs, () => get(`${base}/nodes/${network.deepest}/supply-paths`))
      if (islands.result.islandCount !== walk.result.islands) throw new Error(`island count ${String(islands.result.islandCount)} ≠ ${walk.result.islands}`)
      console.log(
        `${dialect.name.padEnd(8)} PUT network (${(body.length / 1e6).toFixed(1)} MB) ${medianWithSpread(put.ms, ms)}  (${(size / (median(put.ms) / 1000)).toFixed(0)} nodes/s)`,
      )
      console.log(
        `${dialect.name.padEnd(8)} GET islands       ${medianWithSpread(islands.times, ms)}  vs in-memory arrays ${ratio(islands.ms, walk.ms)}  vs indexed walk ${ratio(islands.ms, islandsWalk.ms)}  (${String(islands.result.islandCount)} islands)`,
      )
      console.log(
        `${dialect.name.padEnd(8)} GET supply-paths  ${medianWithSpread(path.times, ms)}  vs in-memory arrays ${ratio(path.ms, walk.ms)}  vs indexed walk ${ratio(path.ms, pathWalk.ms)}  (${(path.result.paths as Array<{ hops: number }>)[0]?.hops ?? 0} hops)`,
      )
      for (let run = 0; run < BENCH_RUNS; run++) await benchStreamedLoad(dialect.name, app, handle, org.id as OrgId, headers, streamSize, run)
    } finally {
      await app.close()
      await handle.close()
    }
  }
}

const streamId = (i: number) => `S${String(i).padStart(7, '0')}`
const streamNode = (i: number): CreateNodeInput => ({
  id: streamId(i),
  name: `Node ${i}`,
  nodeType: i === 0 ? 0 : 3,
  ratedVoltageV: 415,
  tagBindings: { current: `T${i}.I` },
})
/** A tree fed from node 0 (fan-out 4), closed into one ring by the last edge. */
const streamEdge = (i: number, size: number): EdgeInput => ({
  sourceId: streamId(Math.floor((i - 1) / 4)),
  targetId: streamId(i % size),
  edgeType: i === size ? 4 : 0,
})

/** The document of `size` nodes and as many edges, produced in small pieces: the body never exists whole. */
function* streamedDocument(size: number): Generator<string> {
  yield '{"nodes":['
  for (let i = 0; i < size; i++) yield `${i ? ',' : ''}${JSON.stringify(streamNode(i))}`
  yield '],"edges":['
  for (let i = 1; i <= size; i++) yield `${i > 1 ? ',' : ''}${JSON.stringify(streamEdge(i, size))}`
  yield ']}'
}

/** Samples the process's resident set and heap every 10 ms while `work` runs; answers the peak growth over the start. */
async function peakGrowth<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; rssMb: number; heapMb: number }> {
  global.gc?.()
  const start = process.memoryUsage()
  let rss = start.rss
  let heap = start.heapUsed
  const timer = setInterval(() => {
    const m = process.memoryUsage()
    rss = Math.max(rss, m.rss)
    heap = Math.max(heap, m.heapUsed)
  }, 10)
  const t0 = process.hrtime.bigint()
  try {
    const result = await work()
    const m = process.memoryUsage()
    return {
      result,
      ms: Number(process.hrtime.bigint() - t0) / 1e6,
      rssMb: (Math.max(rss, m.rss) - start.rss) / 2 ** 20,
      heapMb: (Math.max(heap, m.heapUsed) - start.heapUsed) / 2 ** 20,
    }
  } finally {
    clearInterval(timer)
  }
}

/**
 * Issue 7: the streamed bulk load of `size` nodes + `size` edges (PUT …/network with a body produced piece by
 * piece), against the same rows inserted through the driver directly (Kysely multi-row inserts from arrays built
 * in memory, one transaction) in the same run: time, throughput and the process's peak memory growth.
 */
async function benchStreamedLoad(
  name: string,
  app: Awaited<ReturnType<typeof buildApp>>,
  handle: DatabaseHandle,
  orgId: OrgId,
  headers: Record<string, string>,
  size: number,
  run: number,
) {
  let bytes = 0
  for (const piece of streamedDocument(size)) bytes += Buffer.byteLength(piece)
  const streamed = await peakGrowth(() =>
    app.inject({
      method: 'PUT',
      url: '/api/sites/BENCH/electrical/network',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: Readable.from(streamedDocument(size)),
    }),
  )
  if (streamed.result.statusCode !== 200) throw new Error(`streamed load: ${streamed.result.statusCode} ${streamed.result.body.slice(0, 300)}`)
  const code = `DIRECT${run}`
  const site = await app.inject({ method: 'POST', url: '/api/sites', headers, payload: { code, name: 'Direct insert' } })
  if (site.statusCode !== 201) throw new Error(`site: ${site.statusCode} ${site.body}`)
  const direct = await peakGrowth(() =>
    handle.db.transaction().execute(async (trx) => {
      const now = Date.now()
      const nodes: ElectricalNodesTable[] = []
      const edges: ElectricalEdgesTable[] = []
      for (let i = 0; i < size; i++) nodes.push(nodeRow(orgId, code, streamNode(i), now, now))
      for (let i = 1; i <= size; i++) {
        const e = streamEdge(i, size)
        edges.push({ org_id: orgId, site_code: code, source_id: e.sourceId, target_id: e.targetId, edge_type: e.edgeType, created_at: now })
      }
      await insertNodes(trx, nodes)
      await insertEdges(trx, edges)
    }),
  )
  const mbps = (ms: number) => (bytes / 2 ** 20 / (ms / 1000)).toFixed(1)
  const eps = (ms: number) => ((2 * size) / (ms / 1000)).toFixed(0)
  console.log(
    `${name.padEnd(8)} run ${run + 1}/${BENCH_RUNS} (${loadSpread([loadNow()])}) streamed PUT network ${size} nodes + ${size} edges (${(bytes / 2 ** 20).toFixed(1)} MiB): ${streamed.ms.toFixed(0)} ms (${eps(streamed.ms)} elements/s, ${mbps(streamed.ms)} MiB/s), peak growth RSS ${streamed.rssMb.toFixed(0)} MiB, heap ${streamed.heapMb.toFixed(0)} MiB`,
  )
  console.log(
    `${name.padEnd(8)} same rows through the driver directly: ${direct.ms.toFixed(0)} ms (${eps(direct.ms)} elements/s), peak growth RSS ${direct.rssMb.toFixed(0)} MiB, heap ${direct.heapMb.toFixed(0)} MiB; streamed/direct time ${ratio(streamed.ms, direct.ms)}`,
  )
}

// `node --import tsx bench/electrical.ts` runs it alone on SQLite.
if (import.meta.url === `file://${process.argv[1]}`) await benchElectrical()
