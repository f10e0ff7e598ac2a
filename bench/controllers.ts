// Issue 6: controllers and instances at volume through the HTTP API (a server process on loopback, an owner key)
// against the same rows written and read directly through the database driver in the same run.
// API: BENCH_CONTROLLERS (1 000) controllers by POST, 16 requests in flight, after 5 000 untimed ones into a site of their
// own (the driver too): a fresh server's requests ran on code not yet compiled (session 20), and V8 optimises a function
// called once a request only after thousands of calls: over creates 1 000–6 000 of a fresh server, --trace-opt counted
// 302, 60, 18, 24, 8 and 4 functions optimised a thousand, and a create's user CPU fell from 730 to ~300 µs, its
// system CPU flat (session 22); BENCH_INSTANCES (50 000) instances by
// POST …/instances/bulk, 2 000 a request (within the default 1 MiB body limit); then every page of both lists (500 controllers, 1 000 instances a page).
// Driver: the same controllers one INSERT each (one autocommitted statement each, as one request commits once), the
// instances in multi-row INSERTs of 2 000 (one statement each, as one bulk request is), each statement prepared once
// (session 20: it was prepared per insert, and on PostgreSQL wrapped in begin/commit), the same keyset pages by SELECT.
// Each figure BENCH_RUNS (3) times, a server of its own each run: the median, the spread and the 1-minute load; the
// ratio printed is the API's speed as a share of the driver's (driver time ÷ API time; issue 29 aims at ≥ 0.3×).
// PostgreSQL: the server runs the application as the app role (BENCH_DATABASE_APP_URL, as bench/api-keys.ts), so
// row-level security checks its rows as in a cell; the driver baseline writes as the database's owner, without it.
import { randomUUID } from 'node:crypto'
import { Agent, request } from 'node:http'
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { appRoleUrl, ensureAppRole } from '../test/postgres.ts'
import { benchRuns, loadSpread, medianWithSpread, scratchSqlite, startBenchServer, stopBenchServer } from './lib.ts'

const BULK = 2000
const CONTROLLER_PAGE = 500
const INSTANCE_PAGE = 1000
const IN_FLIGHT = 16
/** Created first, untimed, on each side (a site of their own): the timed creates run on the server's steady code (above). */
const WARMUP_CONTROLLERS = 5000

const CONTROLLER_COLUMNS = [
  'org_id',
  'site_code',
  'id',
  'name',
  'platform',
  'firmware_version',
  'asset_number',
  'protocol',
  'ip_address',
  'port',
  'cip_path',
  'poll_interval_ms',
  'timeout_ms',
  'retry_delay_ms',
  'max_retries',
  'edge_id',
  'edge_plc_id',
  'created_at',
  'updated_at',
] as const
const INSTANCE_COLUMNS = [
  'org_id',
  'site_code',
  'id',
  'name',
  'type_id',
  'type_version',
  'asset_number',
  'controller_id',
  'area',
  'tag_mappings',
  'tag_count',
  'config',
  'created_at',
  'updated_at',
] as const

const tagsOf = (i: number) => ({ run: `N${i}:B3/0`, speed: `N${i}:F8/1`, fault: `N${i}:B3/2` })

export async function benchControllers(dialects: Array<{ name: string; url?: string }>): Promise<void> {
  const controllers = Number(process.env.BENCH_CONTROLLERS ?? 1000)
  const instances = Number(process.env.BENCH_INSTANCES ?? 50_000)
  for (const dialect of dialects) {
    // The driver baseline runs on the same database after the server stopped: on SQLite the file is the bench's own.
    const scratch = dialect.url === undefined ? scratchSqlite() : undefined
    try {
      await benchDialect(dialect.name, dialect.url ?? scratch!.url, controllers, instances)
    } finally {
      scratch?.remove()
    }
  }
}

async function benchDialect(name: string, databaseUrl: string, controllers: number, instances: number): Promise<void> {
  let pages = ''
  // Each run starts its own server, which provisions an organisation of its own: the runs share no rows.
  const { figures, loads } = await benchRuns(async () => {
    const api = await benchApi(databaseUrl, controllers, instances)
    const raw = await driverRun(databaseUrl, api.orgId, controllers, instances)
    pages = `${api.controllerPages} / ${raw.controllerPages} and ${api.instancePages} / ${raw.instancePages} pages`
    return {
      apiControllersMs: api.controllersMs,
      rawControllersMs: raw.controllersMs,
      controllersSpeed: raw.controllersMs / api.controllersMs,
      apiInstancesMs: api.instancesMs,
      rawInstancesMs: raw.instancesMs,
      instancesSpeed: raw.instancesMs / api.instancesMs,
      apiReadControllersMs: api.readControllersMs,
      rawReadControllersMs: raw.readControllersMs,
      readControllersSpeed: raw.readControllersMs / api.readControllersMs,
      apiReadInstancesMs: api.readInstancesMs,
      rawReadInstancesMs: raw.readInstancesMs,
      readInstancesSpeed: raw.readInstancesMs / api.readInstancesMs,
    }
  })
  const ms = (n: number) => `${n.toFixed(0)} ms`
  const times = (n: number) => `${n.toFixed(2)}x`
  const line = (what: string, api: number[], raw: number[], speed: number[]) =>
    console.log(
      `${name.padEnd(8)} ${what.padEnd(34)} API ${medianWithSpread(api, ms)}   driver ${medianWithSpread(raw, ms)}   API speed vs driver ${medianWithSpread(speed, times)}`,
    )
  line(`create ${controllers} controllers`, figures.apiControllersMs, figures.rawControllersMs, figures.controllersSpeed)
  line(`bulk-create ${instances} instances`, figures.apiInstancesMs, figures.rawInstancesMs, figures.instancesSpeed)
  line(`read ${controllers} controllers`, figures.apiReadControllersMs, figures.rawReadControllersMs, figures.readControllersSpeed)
  line(`read ${instances} instances`, figures.apiReadInstancesMs, figures.rawReadInstancesMs, figures.readInstancesSpeed)
  console.log(`${name.padEnd(8)} controllers ${IN_FLIGHT} requests in flight, instances ${BULK} a request; ${pages}; ${loadSpread(loads)}`)
}

/** The baseline on the same database, in the organisation of the API run (its site `RAW`). */
async function driverRun(databaseUrl: string, orgId: string, controllers: number, instances: number) {
  const raw = await rawDriver(databaseUrl)
  const now = Date.now()
  const insertControllers = async (site: string, count: number) => {
    const ids: string[] = []
    for (let i = 0; i < count; i++) {
      const id = randomUUID()
      ids.push(id)
      await raw.insert('controllers', CONTROLLER_COLUMNS, [
        [
          orgId,
          site,
          id,
          `PLC ${i}`,
          1,
          null,
          `PLC-${i}`,
          'EtherNet/IP',
          `10.${(i >> 8) & 255}.${i & 255}.1`,
          44818,
          null,
          1000,
          5000,
          5000,
          3,
          null,
          null,
          now,
          now,
        ],
      ])
    }
    return ids
  }
  await insertControllers('RAWWARM', WARMUP_CONTROLLERS)
  let t = performance.now()
  const rawControllerIds = await insertControllers('RAW', controllers)
  const controllersMs = performance.now() - t
  t = performance.now()
  for (let b = 0; b * BULK < instances; b++) {
    const rows = Array.from({ length: Math.min(BULK, instances - b * BULK) }, (_, k) => {
      const i = b * BULK + k
      return [
        orgId,
        'RAW',
        `I${i}`,
        `Instance ${i}`,
        'conveyor',
        null,
        `A-${i}`,
        rawControllerIds[i % rawControllerIds.length],
        null,
        JSON.stringify(tagsOf(i)),
        3,
        '{}',
        now,
        now,
      ]
    })
    await raw.insert('instances', INSTANCE_COLUMNS, rows)
  }
  const instancesMs = performance.now() - t
  t = performance.now()
  const controllerPages = await raw.pages('controllers', orgId, 'RAW', CONTROLLER_PAGE)
  const readControllersMs = performance.now() - t
  t = performance.now()
  const instancePages = await raw.pages('instances', orgId, 'RAW', INSTANCE_PAGE)
  const readInstancesMs = performance.now() - t
  await raw.close()
  return { controllersMs, instancesMs, readControllersMs, readInstancesMs, controllerPages, instancePages }
}

/** The candidate: a server process over `databaseUrl`, stopped before this returns. */
async function benchApi(databaseUrl: string, controllers: number, instances: number) {
  const postgres = !databaseUrl.startsWith('sqlite:')
  if (postgres) await ensureAppRole(databaseUrl)
  const server = await startBenchServer('app.ts', { BENCH_DATABASE_URL: databaseUrl, ...(postgres ? { BENCH_DATABASE_APP_URL: appRoleUrl(databaseUrl) } : {}) })
  const base = `http://127.0.0.1:${server.info.port}`
  const headers = { host: server.info.host!, 'x-api-key': server.info.key!, 'content-type': 'application/json' }
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT })
  // node:http rather than fetch: fetch does not send our Host header, which names the tenant.
  const call = (method: string, path: string, body?: unknown) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = request(`${base}${path}`, { method, headers, agent }, (res) => {
        let text = ''
        res
          .setEncoding('utf8')
          .on('data', (d: string) => {
            text += d
          })
          .on('end', () => {
            if ((res.statusCode ?? 500) >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`))
            else resolve(JSON.parse(text) as Record<string, unknown>)
          })
      })
      req.on('error', reject).end(body === undefined ? undefined : JSON.stringify(body))
    })
  try {
    for (const [code, name] of [
      ['API', 'through the API'],
      ['RAW', 'through the driver'],
      ['WARM', 'the warm-up through the API'],
      ['RAWWARM', 'the warm-up through the driver'],
    ])
      await call('POST', '/api/sites', { code, name })
    // Controllers one request each, IN_FLIGHT at a time.
    const createControllers = async (site: string, count: number) => {
      const ids: string[] = []
      for (let next = 0; next < count; ) {
        const wave = Array.from({ length: Math.min(IN_FLIGHT, count - next) }, (_, k) => next + k)
        next += wave.length
        const made = await Promise.all(
          wave.map((i) =>
            call('POST', `/api/sites/${site}/controllers`, {
              name: `PLC ${i}`,
              platform: 1,
              assetNumber: `PLC-${i}`,
              connection: { protocol: 'EtherNet/IP', ipAddress: `10.${(i >> 8) & 255}.${i & 255}.1` },
            }),
          ),
        )
        for (const c of made) ids.push(String(c.controllerId ?? c.id))
      }
      return ids
    }
    await createControllers('WARM', WARMUP_CONTROLLERS)
    let t = performance.now()
    const controllerIds = await createControllers('API', controllers)
    const controllersMs = performance.now() - t
    t = performance.now()
    for (let b = 0; b * BULK < instances; b++) {
      const items = Array.from({ length: Math.min(BULK, instances - b * BULK) }, (_, k) => {
        const i = b * BULK + k
        return {
          id: `I${i}`,
          name: `Instance ${i}`,
          typeId: 'conveyor',
          assetNumber: `A-${i}`,
          controllerId: controllerIds[i % controllerIds.length],
          tagMappings: tagsOf(i),
        }
      })
      await call('POST', '/api/sites/API/instances/bulk', items)
    }
    const instancesMs = performance.now() - t
    t = performance.now()
    const controllerPages = await pageAll((cursor) =>
      call('GET', `/api/sites/API/controllers?limit=${CONTROLLER_PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
    )
    const readControllersMs = performance.now() - t
    t = performance.now()
    const instancePages = await pageAll((cursor) =>
      call('GET', `/api/sites/API/instances?limit=${INSTANCE_PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
    )
    const readInstancesMs = performance.now() - t
    return { controllersMs, instancesMs, readControllersMs, readInstancesMs, controllerPages, instancePages, orgId: server.info.orgId! }
  } finally {
    agent.destroy()
    await stopBenchServer(server)
  }
}

async function pageAll(get: (cursor: string | undefined) => Promise<Record<string, unknown>>): Promise<number> {
  let pages = 0
  let cursor: string | undefined
  do {
    const page = await get(cursor)
    cursor = (page.nextCursor as string | null) ?? undefined
    pages++
  } while (cursor)
  return pages
}

/** The baseline: better-sqlite3 or pg without Kysely, validation or rules. */
async function rawDriver(url: string) {
  const insertSql = (table: string, columns: readonly string[], rows: number, pgStyle: boolean) =>
    `insert into ${table} (${columns.join(',')}) values ${Array.from(
      { length: rows },
      (_, r) => `(${columns.map((_c, c) => (pgStyle ? `$${r * columns.length + c + 1}` : '?')).join(',')})`,
    ).join(',')}`
  const pageSql = (table: string, p: (i: number) => string) =>
    `select * from ${table} where org_id = ${p(1)} and site_code = ${p(2)} and id > ${p(3)} order by id limit ${p(4)}`
  if (url.startsWith('sqlite:')) {
    const db = new BetterSqlite3(url.slice('sqlite:'.length))
    db.pragma('busy_timeout = 5000')
    db.pragma('synchronous = NORMAL')
    // Each statement prepared once, as a program writing these rows would (a statement prepared per insert flattered
    // the API's ratio); one row is its own transaction, chunks of a bulk share one.
    const prepared = new Map<string, BetterSqlite3.Statement>()
    const statement = (text: string) => prepared.get(text) ?? prepared.set(text, db.prepare(text)).get(text)!
    return {
      insert: async (table: string, columns: readonly string[], rows: unknown[][]) => {
        // SQLite's parameter limit: chunks of at most 32 766 parameters, in one transaction.
        const size = Math.floor(32_766 / columns.length)
        const write = () => {
          for (let i = 0; i < rows.length; i += size) {
            const chunk = rows.slice(i, i + size)
            statement(insertSql(table, columns, chunk.length, false)).run(chunk.flat())
          }
        }
        if (rows.length <= size) write()
        else db.transaction(write)()
      },
      pages: async (table: string, orgId: string, site: string, limit: number) => {
        const page = db.prepare(pageSql(table, () => '?'))
        let n = 0
        let after = ''
        for (;;) {
          const rows = page.all(orgId, site, after, limit + 1) as Array<{ id: string }>
          n++
          if (rows.length <= limit) return n
          after = rows[limit - 1]!.id
        }
      },
      close: async () => {
        db.close()
      },
    }
  }
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  return {
    insert: async (table: string, columns: readonly string[], rows: unknown[][]) => {
      const size = Math.floor(65_535 / columns.length)
      // Named, so each statement is parsed once per connection; one row is a single autocommitted statement.
      const query = (client: pg.PoolClient, chunk: unknown[][]) =>
        client.query({ name: `${table}-${chunk.length}`, text: insertSql(table, columns, chunk.length, true), values: chunk.flat() })
      const client = await pool.connect()
      try {
        if (rows.length <= size) await query(client, rows)
        else {
          await client.query('begin')
          for (let i = 0; i < rows.length; i += size) await query(client, rows.slice(i, i + size))
          await client.query('commit')
        }
      } finally {
        client.release()
      }
    },
    pages: async (table: string, orgId: string, site: string, limit: number) => {
      let n = 0
      let after = ''
      for (;;) {
        const { rows } = await pool.query<{ id: string }>(
          pageSql(table, (i) => `$${i}`),
          [orgId, site, after, limit + 1],
        )
        n++
        if (rows.length <= limit) return n
        after = rows[limit - 1]!.id
      }
    },
    close: async () => {
      await pool.end()
    },
  }
}
