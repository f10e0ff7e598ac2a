import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, sql, type Driver } from 'kysely'
import pg from 'pg'
import type { Database } from './schema.ts'
import { startCheckpointer, type CheckpointOptions } from './checkpointer.ts'
import { delegatingDriver } from './delegating-driver.ts'
import { DriverMeter, meteredDriver, type PoolStats } from './pool-meter.ts'
import { scopedPool } from './pg-pool.ts'
import { carryTenantScopes } from './tenant-scope.ts'

export type Dialect = 'sqlite' | 'postgres'

const INVALIDATION_CHANNEL = 'sitegrid_invalidate'

/**
 * The open database plus a cross-process invalidation signal. `generation()` changes whenever another
 * process may have revoked a credential or removed an organisation: caches that matter for security
 * compare it on every use and drop everything when it moved. SQLite reads another process's commits once per turn
 * of the event loop; this process's own invalidations move it at once.
 */
export interface DatabaseHandle {
  readonly db: Kysely<Database>
  readonly dialect: Dialect
  generation(): number
  /** Inside the transaction that revokes: tells the other processes once it commits. */
  announceInvalidation(trx: Kysely<Database>): Promise<void>
  /** After that transaction committed: this process's own caches. */
  invalidateLocally(): void
  /** Cheap round trip for readiness checks. */
  ping(): Promise<void>
  /**
   * Connections the pool could lend now without making anyone wait: idle ones plus room to open more, less the
   * callers already waiting (negative while callers wait). SQLite: 0 (one connection, shared).
   */
  spareConnections(): number
  /** The pool's state now and its counts since it opened, for the metrics (http/metrics.ts). */
  poolStats(): PoolStats
  close(): Promise<void>
}

export interface ConnectOptions {
  /** PostgreSQL pool size per process. */
  poolSize?: number
  /** Fail a query that waits longer than this for a connection or a statement (PostgreSQL). */
  statementTimeoutMs?: number
  /** PostgreSQL: longest wait for a pool connection or a new connection (default: statementTimeoutMs, else 5 s). */
  connectTimeoutMs?: number
  /** PostgreSQL: a query the server does not answer within this fails and its connection is discarded (0: off). */
  queryTimeoutMs?: number
  /** PostgreSQL: a connection lent to no one for this long is closed (default 10 s, pg-pool's). */
  idleTimeoutMs?: number
  /** SQLite file: WAL checkpoints by a worker thread, off the request path (db/checkpointer.ts); the server's. */
  checkpoints?: CheckpointOptions
}

export async function connectDatabase(url: string, options: ConnectOptions = {}): Promise<DatabaseHandle> {
  if (url.startsWith('sqlite:')) return connectSqlite(url.slice('sqlite:'.length), options.checkpoints)
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return connectPostgres(url, options)
  throw new TypeError('DATABASE_URL must start with sqlite: or postgres://')
}

function connectSqlite(path: string, checkpoints: CheckpointOptions | undefined): DatabaseHandle {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const raw = new BetterSqlite3(path)
  const prepare = raw.prepare.bind(raw) // the direct reader's own statements: cachingStatements shares its with Kysely
  raw.pragma('journal_mode = WAL')
  raw.pragma('synchronous = NORMAL')
  raw.pragma('foreign_keys = ON')
  raw.pragma('busy_timeout = 5000')
  const checkpointer = checkpoints && path !== ':memory:' ? startCheckpointer(path, checkpoints) : undefined
  if (checkpointer) raw.pragma(`wal_autocheckpoint = ${checkpointer.backstopPages}`)
  // data_version moves when another connection (another process) commits; our own writes bump `local`.
  const dataVersion = raw.prepare('PRAGMA data_version').pluck()
  let local = 0
  /**
   * data_version as read first in this turn of the event loop, forgotten at its check phase (issue 29, sixth pass):
   * each read takes and drops the WAL read lock (two fcntl), ~4 % of an authenticated request's CPU. The requests of
   * one turn come from the sockets its poll found readable, so they were sent before that first read, and answering
   * them as of it is still linearisable; a revoke another process commits after it is honoured from the next poll on.
   * Not covered (docs/benchmarks.md, sixth pass): a pipelined request that arrived after the poll behind one that
   * made its socket readable, a second poll within one turn (over 1 024 readable sockets), and a first read outside
   * the poll phase (a timer or an immediate: no request path reads it there). Our own commits move `local` at once.
   */
  let remembered: number | undefined
  const forget = () => {
    remembered = undefined
  }
  const readDataVersion = (): number => {
    if (remembered === undefined) {
      remembered = dataVersion.get() as number
      setImmediate(forget)
    }
    return remembered
  }
  const meter: DriverMeter = new DriverMeter(() => meter.lent === 0)
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: cachingStatements(raw) }, meter) })
  directReaders.set(db, rowBuildingReader(raw, prepare))
  directWriters.set(db, immediateWriter(raw, prepare))
  return {
    db,
    dialect: 'sqlite',
    generation: () => readDataVersion() * 1_000_000 + local,
    announceInvalidation: async () => {},
    invalidateLocally: () => {
      local += 1
    },
    ping: async () => {
      await sql`select 1`.execute(db)
    },
    spareConnections: () => 0,
    poolStats: () => meter.stats({ size: 1, open: 1, idle: meter.lent === 0 ? 1 : 0, waiting: meter.pending }),
    close: async () => {
      await checkpointer?.stop()
      await db.destroy()
    },
  }
}

/**
 * SQLite: every transaction takes the write lock when it begins (`BEGIN IMMEDIATE`), waiting up to busy_timeout while
 * another process (a CLI command beside the server) writes. A deferred transaction that had read before that
 * process committed could not write after it (SQLITE_BUSY_SNAPSHOT, at once, busy_timeout notwithstanding): a 500.
 * Free within the process: its one connection runs one transaction at a time anyway.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  readonly #meter: DriverMeter
  constructor(config: ConstructorParameters<typeof SqliteDialect>[0], meter: DriverMeter) {
    super(config)
    this.#meter = meter
  }
  override createDriver(): Driver {
    return delegatingDriver(meteredDriver(super.createDriver(), this.#meter), {
      beginTransaction: async (connection) => {
        await connection.executeQuery(CompiledQuery.raw('begin immediate'))
      },
    })
  }
}

/** The rows at once (SQLite), once they came (PostgreSQL), or undefined: run it through Kysely. */
type DirectReader = (sql: string, parameters: readonly unknown[]) => unknown[] | Promise<unknown[]> | undefined
const directReaders = new WeakMap<Kysely<Database>, DirectReader>()

/**
 * Runs a reusable query without Kysely's executor and driver (their connection lock or provider and promise chain
 * cost more than a small indexed read). None for a transaction's `db`: its queries go through its connection.
 * - SQLite: at once on the one connection. Answers undefined for a statement that is not a read, and while a
 *   transaction is open on the connection (the read must wait for it, through Kysely, or it would see that
 *   transaction's uncommitted rows); a read outside a transaction sees what Kysely's own would have seen.
 * - PostgreSQL: any statement, on a pooled client carrying the caller's tenant scope, as Kysely's would run it
 *   outside a transaction (pg-pool.ts `read`).
 */
export function directReader(db: Kysely<Database>): DirectReader | undefined {
  return directReaders.get(db)
}

/** Ran the statements as one transaction at once (true), or did nothing (false): run them through Kysely. */
type DirectWriter = (statements: readonly CompiledQuery[]) => boolean
const directWriters = new WeakMap<Kysely<Database>, DirectWriter>()

/**
 * SQLite only: runs a few write statements as one `BEGIN IMMEDIATE` transaction synchronously on the connection,
 * without Kysely's connection lock, transaction and promise chain, which cost a one-row create more than its
 * INSERTs (issue 29, session 22). Does nothing while a transaction is open on the connection (a Kysely transaction
 * between its statements): the caller runs the same statements through Kysely, which waits its turn. Nothing else
 * runs on the connection meanwhile, so the transaction is as any other; a statement that fails rolls it back and throws
 * as Kysely's would (the same SqliteError). Waiting for another process's write lock blocks for busy_timeout, as
 * every statement of better-sqlite3 does. None for a transaction's `db` nor on PostgreSQL.
 */
export function directWriter(db: Kysely<Database>): DirectWriter | undefined {
  return directWriters.get(db)
}

function immediateWriter(raw: BetterSqlite3.Database, prepare: BetterSqlite3.Database['prepare']): DirectWriter {
  const statements = new Map<string, BetterSqlite3.Statement>()
  const statement = (source: string) => {
    let found = statements.get(source)
    if (!found) {
      if (statements.size >= 200) statements.clear()
      found = prepare(source)
      statements.set(source, found)
    }
    return found
  }
  const transaction = raw.transaction((queries: readonly CompiledQuery[]) => {
    for (const query of queries) statement(query.sql).run(query.parameters)
  })
  return (queries) => {
    if (raw.inTransaction) return false
    transaction.immediate(queries)
    return true
  }
}

/**
 * The direct reader's statements return their rows as arrays (`raw` mode), made objects here with the column names read
 * once per statement: better-sqlite3 builds each row object in C++ looking every column name up again, which cost more
 * than the read (issue 29, fourth pass). The same objects as Kysely's: one property a column, in column order, a
 * repeated name keeping its last value. Kept apart from cachingStatements' statements, whose mode Kysely relies on.
 */
function rowBuildingReader(raw: BetterSqlite3.Database, prepare: BetterSqlite3.Database['prepare']): DirectReader {
  const statements = new Map<string, { statement: BetterSqlite3.Statement; names: string[] } | undefined>()
  return (source, parameters) => {
    if (raw.inTransaction) return undefined
    let entry = statements.get(source)
    if (!statements.has(source)) {
      if (statements.size >= 2000) statements.clear()
      const statement = prepare(source)
      entry = statement.reader ? { statement: statement.raw(true), names: statement.columns().map((c) => c.name) } : undefined
      statements.set(source, entry)
    }
    if (!entry) return undefined
    const { statement, names } = entry
    return (statement.all(parameters) as unknown[][]).map((values) => {
      const row: Record<string, unknown> = {}
      for (let i = 0; i < names.length; i++) row[names[i]!] = values[i]
      return row
    })
  }
}

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than running a small indexed query.
 * Statements are reused by their SQL text. Safe because the driver runs one query at a time on its one connection
 * and completes each synchronously (nothing here streams with `iterate`).
 */
function cachingStatements(raw: BetterSqlite3.Database): BetterSqlite3.Database {
  const prepare = raw.prepare.bind(raw)
  const cache = new Map<string, BetterSqlite3.Statement>()
  raw.prepare = ((source: string) => {
    let statement = cache.get(source)
    if (!statement) {
      if (cache.size >= 2000) cache.clear() // bulk paths build many distinct statements
      statement = prepare(source)
      cache.set(source, statement)
    }
    return statement
  }) as typeof raw.prepare
  return raw
}

async function connectPostgres(url: string, options: ConnectOptions): Promise<DatabaseHandle> {
  carryTenantScopes() // row-level security reads the scope of every query from here on
  const types = {
    getTypeParser: (oid: number, format?: string) => {
      // int8 (epoch ms, counts) and numeric fit a JS number for every value this service stores.
      if (oid === 20 || oid === 1700) return (v: string) => Number(v)
      return pg.types.getTypeParser(oid, format as 'text')
    },
  }
  const max = options.poolSize ?? 10
  const idleTimeoutMs = options.idleTimeoutMs ?? 10_000
  const pool = new pg.Pool({
    connectionString: url,
    max,
    types,
    idleTimeoutMillis: idleTimeoutMs,
    connectionTimeoutMillis: options.connectTimeoutMs ?? options.statementTimeoutMs ?? 5_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
  })
  pool.on('error', () => {}) // idle-client errors surface on the next query; never crash the process
  // The meter's `lender` is assigned before any loan: the check runs as a loan starts.
  const meter: DriverMeter = new DriverMeter(() => lender.idleCount() > 0 || pool.totalCount < max)
  const lender = scopedPool(pool, meter, idleTimeoutMs)
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: lender }) })
  directReaders.set(db, lender.read)
  const listener = createListener(url, types)
  await listener.start()
  let local = 0
  return {
    db,
    dialect: 'postgres',
    generation: () => listener.generation() + local,
    announceInvalidation: async (trx) => {
      await sql`select pg_notify(${INVALIDATION_CHANNEL}, '')`.execute(trx)
    },
    invalidateLocally: () => {
      local += 1
    },
    ping: async () => {
      await sql`select 1`.execute(db)
    },
    spareConnections: () => lender.idleCount() + (max - pool.totalCount) - pool.waitingCount,
    poolStats: () => meter.stats({ size: max, open: pool.totalCount, idle: lender.idleCount(), waiting: pool.waitingCount }),
    close: async () => {
      await listener.stop()
      await db.destroy()
    },
  }
}

// A dedicated connection LISTENs for invalidations. While it is down we cannot hear revocations,
// so generation() changes on every call and every cache lookup goes to the database: fail safe, not fast.
function createListener(url: string, types: pg.CustomTypesConfig) {
  let counter = 0
  let healthy = false
  let stopped = false
  let client: pg.Client | undefined
  let retry: NodeJS.Timeout | undefined

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString: url, types })
    c.on('notification', () => {
      counter += 1
    })
    c.on('error', () => reconnect())
    c.on('end', () => reconnect())
    await c.connect()
    await c.query(`LISTEN ${INVALIDATION_CHANNEL}`)
    client = c
    healthy = true
    counter += 1 // anything may have happened while we were not listening
  }
  function reconnect(): void {
    healthy = false
    if (stopped || retry) return
    retry = setTimeout(() => {
      retry = undefined
      connect().catch(() => reconnect())
    }, 500)
    retry.unref()
  }
  return {
    start: connect,
    generation: () => (healthy ? counter : (counter += 1)),
    stop: async () => {
      stopped = true
      if (retry) clearTimeout(retry)
      await client?.end().catch(() => {})
    },
  }
}
