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
 *   setting is session-wide (`set_config(…, false)`, sent outside any transaction, so no rollback undoes it) and is
 *   written only when the client last carried another scope: one extra round trip per change, none per query. The
 *   scope a client carries is forgotten before it is written, so a failed write is written again on the next loan.
 *   A transaction keeps the scope of its start (its client is borrowed once).
 * - **The pool meter's counts** (pool-meter.ts): each loan, the wait for it (the pool's, not the scope's round trip),
 *   the clients lent, the queries that time out.
 * - **A broken client is never lent again**: a client whose query timed out (no answer from the server: the query is
 *   still pending on it), whose connection failed, or which emitted an error is released with an error, which makes
 *   pg-pool destroy it; otherwise every later request would queue behind it.
 *
 * `read` is the reusable queries' path (issue 29, fifth pass): one statement, prepared by name on each client, on a
 * client borrowed and returned with callbacks, making one promise where Kysely's executor, its connection provider
 * and the driver layers made some thirty — each of them running Node's promise hooks for the scope's
 * AsyncLocalStorage. Its rows are the objects pg builds, made from the statement's columns read once (sixth pass).
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

/**
 * A statement prepared by name. pg copies a query config object by its property descriptors (~5 µs a query, more than
 * the rest of its work on a small read); given the text as a string it does not, and the name is set afterwards.
 *
 * Its rows are built from the statement's columns, read from the first answer's description and kept: pg's `Result`
 * looks every column's type parser up and builds a row template on every answer (`addFields`, 3 % of a cached
 * request's CPU, issue 29 sixth pass). The same objects as pg's: one property a column, in column order, a repeated
 * name keeping its last value, each value through the pool's type parser for its type, null as null.
 */
class NamedQuery extends pg.Query {
  readonly #statement: Statement
  #columns: Columns | undefined
  readonly #rows: unknown[] = []
  constructor(statement: Statement, values: readonly unknown[], callback: (err: Error | undefined, rows: unknown[]) => void) {
    super(statement.text, values as unknown[], ((err: Error | undefined) => callback(err, this.#rows)) as ConstructorParameters<typeof pg.Query>[2])
    ;(this as unknown as { name: string }).name = statement.name
    this.#statement = statement
  }

  handleRowDescription(msg: { fields: Field[] }): void {
    const types = (this as unknown as { _result: { _types: Parsers } })._result._types
    // The pool binds every statement's results as text; a binary column would need pg's own decoding.
    if (msg.fields.some((f) => f.format !== 'text')) this.#cancel(new TypeError('a reusable statement answered a binary column'))
    else this.#columns = this.#statement.columns ??= describe(msg.fields, types)
  }

  handleDataRow(msg: { fields: Array<string | null> }): void {
    if (this.#canceled()) return
    const { names, parsers } = this.#columns!
    const row: Record<string, unknown> = {}
    try {
      for (let i = 0; i < names.length; i++) {
        const value = msg.fields[i]
        row[names[i]!] = value === null || value === undefined ? null : parsers[i]!(value)
      }
    } catch (err) {
      return this.#cancel(err)
    }
    this.#rows.push(row)
  }

  /** As pg's own: a failure reading the answer is the query's, reported once the server is ready again. */
  #cancel(err: unknown): void {
    ;(this as unknown as { _canceledDueToError: unknown })._canceledDueToError = err
  }

  #canceled(): boolean {
    return Boolean((this as unknown as { _canceledDueToError: unknown })._canceledDueToError)
  }
}

function describe(fields: Field[], types: Parsers): Columns {
  return { names: fields.map((f) => f.name), parsers: fields.map((f) => types.getTypeParser(f.dataTypeID, 'text')) }
}

export function scopedPool(pool: pg.Pool, meter: DriverMeter, idleTimeoutMs: number): ScopedPool {
  const scopes = new WeakMap<pg.PoolClient, string>()
  const broken = new WeakSet<pg.PoolClient>()
  const watched = new WeakSet<pg.PoolClient>()
  /** pg-pool's own release of each client it lent: the client goes back to it (and, with a failure, is destroyed). */
  const returns = new WeakMap<pg.PoolClient, (failure?: Error | boolean) => void>()
  /** The clients our callers gave back, most recent last: lent from pg-pool still, so its timers see none of their loans. */
  const idle: Array<{ client: pg.PoolClient; since: number }> = []
  let closing: NodeJS.Timeout | undefined
  let ending = false
  /** Each reusable statement by its text: one name per text across the clients, and its columns once described. */
  const statements = new Map<string, Statement>()

  function failed(client: pg.PoolClient, err: unknown): void {
    meter.failed(err)
    if (isConnectionFault(err)) broken.add(client)
  }

  /** Kysely's queries (promise style): a failure counted and, for a fault, the client marked. Callbacks report their own. */
  function watch(client: pg.PoolClient): void {
    watched.add(client)
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
   * Borrows a client carrying `scope`; `then` owns it (its `release` counts it back) or gets the error. A client kept
   * here is lent at once: pg-pool's loan costs a timer for the connection timeout, a tick, and on release a timer for
   * the idle timeout (issue 29, sixth pass); only when none is kept does pg-pool lend, open or make the caller wait.
   */
  function lend(scope: string, then: Lent): void {
    const started = meter.startAcquire()
    for (let kept = idle.pop(); kept; kept = idle.pop()) {
      if (!usable(kept.client)) {
        returns.get(kept.client)!(true)
        continue
      }
      meter.endAcquire(started)
      return carry(kept.client, scope, then)
    }
    pool.connect((err, client) => {
      meter.endAcquire(started, err)
      if (err || !client) return then(err ?? new Error('pg-pool lent no client'))
      if (!watched.has(client)) watch(client)
      returns.set(client, client.release)
      carry(client, scope, then)
    })
  }

  function carry(client: pg.PoolClient, scope: string, then: Lent): void {
    let released = false
    client.release = (failure?: Error | boolean) => {
      if (released) throw new Error('Release called on client which has already been released to the pool.')
      released = true
      meter.lent--
      if (failure) returns.get(client)!(failure)
      else giveBack(client)
    }
    if (scopes.get(client) === scope) return then(undefined, client)
    scopes.delete(client)
    client.query(SET_SCOPE, [scope], (err: Error | undefined) => {
      if (err) {
        failed(client, err)
        client.release()
        return then(err)
      }
      scopes.set(client, scope)
      then(undefined, client)
    })
  }

  return {
    connect() {
      const scope = currentScope()
      return new Promise((resolve, reject) => lend(scope, (err, client) => (err ? reject(err) : resolve(client!))))
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
      return new Promise((resolve, reject) =>
        lend(scope, (err, client) => {
          if (err) return reject(err)
          client!.query(
            new NamedQuery(statement, values, (err, rows) => {
              if (err) failed(client!, err)
              client!.release()
              if (err) reject(err)
              else resolve(rows)
            }),
          )
        }),
      )
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
