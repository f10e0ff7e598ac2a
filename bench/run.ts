// npm run bench: every hot path as a ratio against a baseline measured in the same run.
// BENCH_SECONDS (default 5) per HTTP measurement; BENCH_RUNS (3) runs of each figure (median, spread, load); BENCH_DIALECTS=sqlite,postgres (PostgreSQL is started here unless
// TEST_DATABASE_URL names one); BENCH_ONLY=api-keys,bearer,alarms,controllers,electrical,load-flow,short-circuit,historian,live-samples,tenant-transfer
// picks benches. Sizes: BENCH_ALARM_EVENTS (100 000; the memory bound is for 1 000 000), BENCH_HISTORIAN_ROWS (5 000 000), BENCH_TRANSFER_SAMPLES (1 000 000),
// BENCH_TRANSFER_ALARMS (10 000), BENCH_ELECTRICAL_NODES (50 000), BENCH_CONTROLLERS (1 000), BENCH_INSTANCES (50 000),
// BENCH_LF_BUSES (5 000; load-flow needs no database), BENCH_SC_BUSES (5 000; short-circuit needs none either).
// live-samples: BENCH_LIVE_SAMPLES (1 000 000) in batches of BENCH_LIVE_BATCH (1 000), BENCH_LIVE_CONCURRENCY (4) gateways.
// fleet-link (not in the default set: BENCH_ONLY=fleet-link): BENCH_LINK_SAMPLES (1 000 000), BENCH_LINK_EVENTS (10 000),
// BENCH_LINK_LATENCY_EVENTS (200).
// historian-reads (not in the default set: BENCH_ONLY=historian-reads): BENCH_HISTORIAN_READ_SAMPLES (10 000 000).
// edges (not in the default set: BENCH_ONLY=edges): the config poll's 304 against the key list, BENCH_EDGE_CONTROLLERS (20),
// BENCH_EDGE_INSTANCES (10).
// startup (not in the default set: BENCH_ONLY=startup; needs no database): whole processes against node -e 0.
import { startPostgres, createTestDatabase } from '../test/postgres.ts'
import { benchAlarms } from './alarms.ts'
import { benchApiKeys } from './api-keys.ts'
import { benchBearer } from './bearer.ts'
import { benchControllers } from './controllers.ts'
import { benchEdges } from './edges.ts'
import { benchElectrical } from './electrical.ts'
import { benchFleetLink } from './fleet-link.ts'
import { benchHistorian } from './historian.ts'
import { benchHistorianReads } from './historian-reads.ts'
import { benchLiveSamples } from './live-samples.ts'
import { benchLoadFlow, benchLoadFlowEndpoint } from './load-flow.ts'
import { benchShortCircuit } from './short-circuit.ts'
import { benchStartup } from './startup.ts'
import { benchTenantTransfer } from './tenant-transfer.ts'
import { waitForQuietMachine } from './lib.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const wanted = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',')
const only = process.env.BENCH_ONLY?.split(',')
const runs = (name: string) => !only || only.includes(name)
let stop: (() => Promise<void>) | undefined
const dialects: Array<{ name: string; url?: string; fresh?: () => Promise<string> }> = []
if (wanted.includes('sqlite')) dialects.push({ name: 'sqlite' })
if (wanted.includes('postgres')) {
  let admin = process.env.TEST_DATABASE_URL
  if (!admin) {
    const pg = await startPostgres()
    admin = pg.url
    stop = pg.stop
  }
  const adminUrl = admin
  dialects.push({ name: 'postgres', url: await createTestDatabase(adminUrl), fresh: () => createTestDatabase(adminUrl) })
}
console.log(`# sitegrid bench: node ${process.version}, ${dialects.map((d) => d.name).join(' + ')}, loopback`)
// Each bench starts only on a quiet machine (issue 29): run.ts waits for a 1-minute load below 1.5 before each one and
// says so (BENCH_NO_WAIT=1 skips the wait, for smoke runs); each bench measures its figures BENCH_RUNS (3) times.
const benches: Array<[string, () => unknown]> = [
  ['api-keys', () => benchApiKeys(dialects, seconds)],
  ['bearer', () => benchBearer(dialects, seconds)],
  ['alarms', () => benchAlarms(dialects)],
  ['controllers', () => benchControllers(dialects)],
  ['electrical', () => benchElectrical(dialects, Number(process.env.BENCH_ELECTRICAL_NODES ?? 50_000))],
  [
    'load-flow',
    () => {
      benchLoadFlow(Number(process.env.BENCH_LF_BUSES ?? 5_000))
      benchLoadFlowEndpoint(Number(process.env.BENCH_LF_BUSES ?? 5_000))
    },
  ],
  ['short-circuit', () => benchShortCircuit(Number(process.env.BENCH_SC_BUSES ?? 5_000))],
  ['historian', () => benchHistorian(dialects)],
  ['live-samples', () => benchLiveSamples(dialects)],
  ['tenant-transfer', () => benchTenantTransfer(dialects.map((d) => ({ name: d.name, url: d.fresh })))],
]
/** Not in the default set (long, or a figure of its own issue): only by name in BENCH_ONLY. */
const onRequest: Array<[string, () => unknown]> = [
  ['fleet-link', () => benchFleetLink(dialects)],
  ['historian-reads', () => benchHistorianReads(dialects)],
  ['startup', () => benchStartup()],
  ['edges', () => benchEdges(dialects, seconds)],
]
try {
  for (const [name, bench] of [...benches.filter(([name]) => runs(name)), ...onRequest.filter(([name]) => only?.includes(name))]) {
    console.log(`# ${name}`)
    await waitForQuietMachine()
    await bench()
  }
} finally {
  await stop?.()
}
