import pg from 'pg'
import type { DriverMeter } from './pool-meter.ts'
import { SCOPE_SETTING } from './row-level-security.ts'
import { currentScope } from './tenant-scope.ts'

const SET_SCOPE = `select set_config('${SCOPE_SETTING}', $1, false)`

/**
 * The PostgreSQL pool as the service borrows from it, for Kysely's driver (`connect`, `end`) and for the reusable
 * queries (`read`) alike, so that both keep the same three guarantees, written once here:
 *
 * - **Row-level security** (migration 1200): a lent client carries the tenant scope of the async context that asked
 *   for it (tenant-scope.ts) in its session setting `sitegrid.org_id`; no scope is '' and shows no tenant rows. The
 *   setting is session-wide (`set_config(…, false)`, committed before the client's next transaction begins, so no
 *   rollback of that transaction undoes it) and is written only when the client last carried another scope: one extra
 *   round trip per change (in a batch of reads: one more statement in the same write), none per query. The scope a
 *   client carries is forgotten before it is written and known again only once the write committed, so a failed write
 *   is written again on the next loan.
 *   A transaction keeps the scope of its start (its client is borrowed once).
 * - **The pool meter's counts** (pool-meter.ts): each loan, the wait for it (the pool's, not the scope's round trip),
 *   the clients lent, the queries that time out.
 * - **A broken client is never lent again**: a client whose query timed out (no answer from the server: the query is
 *   still pending on it), whose connection failed, or which emitted an error is released with an error, which makes
 *   pg-pool destroy it; otherwise every later request would queue behind it.
 *
 * `read` is the reusable queries' path (issue 29, fifth pass; reads only, reusable-query.ts): no Kysely executor, one
 * promise a read where Kysely's layers made some thirty, each running Node's promise hooks for the scope's
 * AsyncLocalStorage. The reads asked for in one turn of the event loop go to the server together (session 27,
 * `ReadBatch`): one write and one answer for all of them on one client, where each read made its own write and its
 * own answer on a client of its own (the pair of system calls a read cost more than the rest of its work). A read
 * carries the scope it was asked in: the batch sets each scope before the reads of it, in the same transaction.
 *
 * A client given back is kept by the lender and lent again at once (issue 29, sixth pass): pg-pool opens the clients,
 * makes callers wait when all are lent, and destroys the broken ones; its timers a loan and a release are not paid.
 */
export interface ScopedPool {
  connect(): Promise<pg.PoolClient>
  end(): Promise<void>
  /** Clients open and lent to no one: those kept here and those idle in pg-pool. */
  idleCount(): number
  read(text: string, values: readonly unknown[]): Promise<unknown[]>
}

type Lent = (err: Error | undefined, client?: pg.PoolClient) => void

/** A reusable statement: its name, and its columns once a first answer described them. */
interface Statement {
  readonly name: string
  readonly text: string
  columns?: Columns
}

/** The row shape of a statement, read once: the column names and their type parsers, in column order. */
interface Columns {
  readonly names: string[]
  readonly parsers: Array<(value: string) => unknown>
}

type Field = { name: string; dataTypeID: number; format: string }
type Parsers = { getTypeParser(oid: number, format: 'text'): (value: string) => unknown }

/** A read waiting for its batch: the statement, its values, the scope it runs in, and its caller. */
interface Read {
  readonly statement: Statement
  readonly values: readonly unknown[]
  readonly scope: string
  readonly resolve: (rows: unknown[]) => void
  readonly reject: (err: Error) => void
}

/** What the lender knows of one client's session: the scope it carries, and the statements prepared on it. */
interface Session {
  scope: string | undefined
  readonly prepared: Set<string>
}

/** One statement of a batch: a read, or the scope setting that the reads after it run in. */
interface Step {
  readonly statement: Statement
  readonly values: readonly unknown[]
  readonly read?: Read
  readonly rows: unknown[]
  error?: unknown
}

const SCOPE_STATEMENT: Statement = { name: 'sitegrid_scope', text: SET_SCOPE }

/** How a batch ended: the failure if any, and the reads still to run (those after the one that failed). */
type BatchEnd = (err: Error | undefined, unrun: Read[]) => void

/**
 * The reads of one event-loop turn, sent to the server in one write and answered in order (issue 29, session 27):
 * each read is its statement prepared by name (parsed once per client), bound and executed; a change of scope between
 * two reads is its `set_config` statement between them; one Sync ends them all, so they run as one implicit
 * transaction. A statement that fails aborts that transaction: what follows it never runs, and a scope set before it
 * is undone — so no read runs in a scope its setting did not reach. The failed read gets its error; the reads after it
 * are handed back to run again; the reads before it already have their rows (reads only: nothing of theirs is undone).
 *
 * Rows are built from the statement's columns, read from the first answer's description and kept (the first batch to
 * send a statement asks for its description; later ones do not): pg's `Result` looks every column's type parser up
 * and builds a row template on every answer (`addFields`, issue 29 sixth pass). The same objects as pg's: one property
 * a column, in column order, a repeated name keeping its last value, each value through the pool's type parser for its
 * type, null as null.
 */
class ReadBatch extends pg.Query {
  readonly #steps: Step[] = []
  readonly #session: Session
  readonly #end: BatchEnd
  /** The scope the session carries once the batch commits, and the statements it prepares. */
  readonly #scope: string | undefined
  readonly #preparing = new Set<string>()
  #at = 0
  #ended = false

  constructor(reads: readonly Read[], session: Session, end: BatchEnd) {
    super('')
    this.#session = session
    this.#end = end
    let scope = session.scope
    for (const read of reads) {
      if (read.scope !== scope) {
        scope = read.scope
        this.#steps.push({ statement: SCOPE_STATEMENT, values: [scope], rows: [] })
      }
      this.#steps.push({ statement: read.statement, values: read.values, read, rows: [] })
    }
    this.#scope = scope
  }

  /** The statements the batch sends, in order (the scope settings among them); their values are mapped already (`read`). */
  texts(): string[] {
    return this.#steps.map(({ statement }) => statement.text)
  }

  override submit = (connection: pg.Connection): null => {
    const con = connection as unknown as Wire
    con.stream.cork()
    try {
      for (const { statement, values, read } of this.#steps) {
        const { name, text } = statement
        if (!this.#session.prepared.has(name) && !this.#preparing.has(name)) {
          // A statement of a batch that failed may or may not exist on the server: closing a missing one is no error.
          con.close({ type: 'S', name })
          con.parse({ name, text })
          this.#preparing.add(name)
        }
        con.bind({ statement: name, values })
        if (read && !statement.columns) con.describe({ type: 'P', name: '' })
        con.execute({ portal: '' })
      }
      con.sync()
    } finally {
      con.stream.uncork()
    }
    return null
  }

  handleRowDescription(msg: { fields: Field[] }): void {
    const step = this.#steps[this.#at]!
    const types = (this as unknown as { _result: { _types: Parsers } })._result._types
    // The pool binds every statement's results as text; a binary column would need pg's own decoding.
    if (msg.fields.some((f) => f.format !== 'text')) step.error = new TypeError('a reusable statement answered a binary column')
    else step.statement.columns ??= describe(msg.fields, types)
  }

  handleDataRow(msg: { fields: Array<string | null> }): void {
    const step = this.#steps[this.#at]!
    if (!step.read || step.error) return
    const { names, parsers } = step.statement.columns!
    const row: Record<string, unknown> = {}
    try {
      for (let i = 0; i < names.length; i++) {
        const value = msg.fields[i]
        row[names[i]!] = value === null || value === undefined ? null : parsers[i]!(value)
      }
    } catch (err) {
      step.error = err
      return
    }
    step.rows.push(row)
  }

  handleCommandComplete(): void {
    const { read, rows, error } = this.#steps[this.#at++]!
    if (!read) return
    if (error) read.reject(error as Error)
    else read.resolve(rows)
  }

  handleReadyForQuery(): void {
    if (this.#ended) return
    this.#session.scope = this.#scope
    for (const name of this.#preparing) this.#session.prepared.add(name)
    this.#finish(undefined)
  }

  /**
   * The server's error for the read being answered: that read fails, and the batch's transaction is aborted (the scope
   * and preparations of the batch are not trusted; the reads after it never ran and are handed back). Any other
   * failure (a read timeout, a lost connection, a scope setting refused) fails every read not yet answered.
   */
  handleError(err: Error): void {
    if (this.#ended) return
    this.#session.scope = undefined
    const failed = this.#steps[this.#at]
    if (err instanceof pg.DatabaseError && failed?.read) {
      this.#at++
      failed.read.reject(err)
    } else {
      for (const { read } of this.#steps.slice(this.#at)) read?.reject(err)
      this.#at = this.#steps.length
    }
    this.#finish(err)
  }

  #finish(err: Error | undefined): void {
    this.#ended = true
    // pg's query timeout, if set, waits for the query's callback.
    ;(this as unknown as { callback?: (err?: Error) => void }).callback?.(err)
    const unrun = this.#steps.slice(this.#at).flatMap(({ read }) => (read ? [read] : []))
    this.#end(err, unrun)
  }
}

/**
 * The statements of a batch of reads handed to pg's `Client#query` (one round trip), or undefined for any other query:
 * for tests that watch what the process sends through pg.
 */
export function batchedStatements(query: unknown): string[] | undefined {
  return query instanceof ReadBatch ? query.texts() : undefined
}

/** The extended-protocol messages of pg's connection a batch writes. */
interface Wire {
  stream: { cork(): void; uncork(): void }
  close(msg: { type: 'S'; name: string }): void
  parse(msg: { name: string; text: string }): void
  bind(msg: { statement: string; values: readonly unknown[] }): void
  describe(msg: { type: 'P'; name: string }): void
  execute(msg: { portal: string }): void
  sync(): void
}

// pg's own mapping of a bound value to its text (as for Kysely's queries); exported by pg, absent from its types.
const { prepareValue } = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils

function describe(fields: Field[], types: Parsers): Columns {
  return { names: fields.map((f) => f.name), parsers: fields.map((f) => types.getTypeParser(f.dataTypeID, 'text')) }
}

/** The most reads one batch carries; more in one turn go in several batches, on several clients. */
const MAX_BATCH = 64

export function scopedPool(pool: pg.Pool, meter: DriverMeter, idleTimeoutMs: number): ScopedPool {
  const sessions = new WeakMap<pg.PoolClient, Session>()
  const broken = new WeakSet<pg.PoolClient>()
  /** pg-pool's own release of each client it lent: the client goes back to it (and, with a failure, is destroyed). */
  const returns = new WeakMap<pg.PoolClient, (failure?: Error | boolean) => void>()
  /** The clients our callers gave back, most recent last: lent from pg-pool still, so its timers see none of their loans. */
  const idle: Array<{ client: pg.PoolClient; since: number }> = []
  let closing: NodeJS.Timeout | undefined
  let ending = false
  /** Each reusable statement by its text: one name per text across the clients, and its columns once described. */
  const statements = new Map<string, Statement>()
  /** The reads asked for in this turn of the event loop, sent together once it ends (`flush`). */
  let waiting: Read[] = []
  let flushing: NodeJS.Immediate | undefined

  function failed(client: pg.PoolClient, err: unknown): void {
    meter.failed(err)
    if (isConnectionFault(err)) broken.add(client)
  }

  /** Kysely's queries (promise style): a failure counted and, for a fault, the client marked. Callbacks report their own. */
  function watch(client: pg.PoolClient): void {
    sessions.set(client, { scope: undefined, prepared: new Set() })
    // Also while the client is idle here: pg-pool listens to its clients only while they are idle in its own list.
    client.on('error', () => broken.add(client))
    const query = client.query.bind(client) as (...args: unknown[]) => unknown
    client.query = ((...args: unknown[]) => {
      const result = query(...args)
      if (result instanceof Promise) result.catch((err: unknown) => failed(client, err))
      return result
    }) as typeof client.query
  }

  function usable(client: pg.PoolClient): boolean {
    const state = client as unknown as { _queryable: boolean; _ending: boolean }
    return !broken.has(client) && state._queryable && !state._ending
  }

  /** A client given back is kept here unless pg-pool must have it: callers wait for it, the pool ends, or it is broken. */
  function giveBack(client: pg.PoolClient): void {
    if (!usable(client)) return returns.get(client)!(true)
    if (ending || pool.waitingCount > 0) return returns.get(client)!()
    idle.push({ client, since: performance.now() })
    closing ??= setTimeout(closeIdle, idleTimeoutMs).unref()
  }

  /** pg-pool's idle timeout, for the clients kept here: one idle this long is closed. One timer at a time, not one a loan. */
  function closeIdle(): void {
    closing = undefined
    const now = performance.now()
    while (idle.length > 0 && now - idle[0]!.since >= idleTimeoutMs) returns.get(idle.shift()!.client)!(true)
    if (idle.length > 0) closing = setTimeout(closeIdle, idleTimeoutMs - (now - idle[0]!.since)).unref()
  }

  /**
   * Borrows a client; `then` owns it (its `release` counts it back) or gets the error. A client kept here is lent at
   * once: pg-pool's loan costs a timer for the connection timeout, a tick, and on release a timer for the idle timeout
   * (issue 29, sixth pass); only when none is kept does pg-pool lend, open or make the caller wait.
   */
  function lend(then: Lent): void {
    const started = meter.startAcquire()
    for (let kept = idle.pop(); kept; kept = idle.pop()) {
      if (!usable(kept.client)) {
        returns.get(kept.client)!(true)
        continue
      }
      meter.endAcquire(started)
      return owned(kept.client, then)
    }
    pool.connect((err, client) => {
      meter.endAcquire(started, err)
      if (err || !client) return then(err ?? new Error('pg-pool lent no client'))
      if (!sessions.has(client)) watch(client)
      returns.set(client, client.release)
      owned(client, then)
    })
  }

  function owned(client: pg.PoolClient, then: Lent): void {
    let released = false
    client.release = (failure?: Error | boolean) => {
      if (released) throw new Error('Release called on client which has already been released to the pool.')
      released = true
      meter.lent--
      if (failure) returns.get(client)!(failure)
      else giveBack(client)
    }
    then(undefined, client)
  }

  /** Kysely's loan: a client carrying `scope`, written first only when the client last carried another. */
  function carry(scope: string, then: Lent): void {
    lend((err, client) => {
      if (err) return then(err)
      const session = sessions.get(client!)!
      if (session.scope === scope) return then(undefined, client)
      session.scope = undefined
      client!.query(SET_SCOPE, [scope], (err: Error | undefined) => {
        if (err) {
          failed(client!, err)
          client!.release()
          return then(err)
        }
        session.scope = scope
        then(undefined, client)
      })
    })
  }

  /** Sends the reads of the turn, in batches of at most MAX_BATCH, each on a client of its own. */
  function flush(): void {
    flushing = undefined
    const reads = waiting
    waiting = []
    for (let at = 0; at < reads.length; at += MAX_BATCH) send(reads.slice(at, at + MAX_BATCH))
  }

  function send(reads: Read[]): void {
    lend((err, client) => {
      if (err) {
        for (const read of reads) read.reject(err)
        return
      }
      client!.query(
        new ReadBatch(reads, sessions.get(client!)!, (err, unrun) => {
          if (err) failed(client!, err)
          client!.release()
          // Sent again at once, each by itself: a read never runs again behind another's failure, and a turn of many
          // failing reads costs each read one more execution at most, not one for every failure before it.
          for (const read of unrun) send([read])
        }),
      )
    })
  }

  return {
    connect() {
      const scope = currentScope()
      return new Promise((resolve, reject) => carry(scope, (err, client) => (err ? reject(err) : resolve(client!))))
    },
    end() {
      ending = true
      clearTimeout(closing)
      for (const { client } of idle.splice(0)) returns.get(client)!()
      return pool.end()
    },
    idleCount: () => pool.idleCount + idle.length,
    read(text, values) {
      const scope = currentScope()
      let statement = statements.get(text)
      if (statement === undefined) {
        statement = { name: `sitegrid_${statements.size}`, text }
        statements.set(text, statement)
      }
      // Each value as pg sends it, mapped now: a value it cannot send fails this read alone, before any batch is written.
      let mapped: unknown[]
      try {
        mapped = values.map((value) => prepareValue(value))
      } catch (err) {
        return Promise.reject(err as Error)
      }
      const target = statement
      return new Promise((resolve, reject) => {
        waiting.push({ statement: target, values: mapped, scope, resolve, reject })
        flushing ??= setImmediate(flush)
      })
    },
  }
}

/** Errors after which a connection cannot be trusted with another query. */
function isConnectionFault(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: string; message?: string }
  return (
    ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03'].includes(code ?? '') ||
    /Query read timeout|Connection terminated|timeout exceeded when trying to connect/i.test(message ?? '')
  )
}
