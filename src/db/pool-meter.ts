import type { DatabaseConnection, Driver } from 'kysely'
import { delegatingDriver } from './delegating-driver.ts'

/** A query that failed on a timeout: PostgreSQL's statement_timeout, the client's query timeout, no pool connection in time; SQLite: the write lock not free within busy_timeout. */
export type DatabaseTimeout = 'statement' | 'query' | 'connect' | 'busy'

export interface PoolStats {
  /** Connections the pool may open (SQLite: 1, its one connection). */
  size: number
  /** Connections open, and of them idle (SQLite: 1, and 1 while no query or transaction holds it). */
  open: number
  idle: number
  /** Callers waiting for a connection now. */
  waiting: number
  /** Connections lent since the pool opened; of them those asked for while none was free; the seconds spent acquiring. */
  acquired: number
  waited: number
  acquireSeconds: number
  timeouts: Record<DatabaseTimeout, number>
}

/** The counts of a driver's connections: lent, waited for, timed out (PoolStats). */
export class DriverMeter {
  lent = 0
  pending = 0
  acquired = 0
  waited = 0
  acquireSeconds = 0
  readonly timeouts: Record<DatabaseTimeout, number> = { statement: 0, query: 0, connect: 0, busy: 0 }
  constructor(readonly isFree: () => boolean) {}

  /** Before asking for a connection: counts the wait it may be; returns the start for `endAcquire`. */
  startAcquire(): number {
    if (!this.isFree()) this.waited++
    this.pending++
    return performance.now()
  }

  /** The connection asked for at `started` came (one more lent), or failed with `err`. */
  endAcquire(started: number, err?: unknown): void {
    this.pending--
    this.acquireSeconds += (performance.now() - started) / 1000
    if (err) return this.failed(err)
    this.acquired++
    this.lent++
  }

  failed(err: unknown): void {
    const kind = timeoutOf(err)
    if (kind) this.timeouts[kind]++
  }

  stats(now: Pick<PoolStats, 'size' | 'open' | 'idle' | 'waiting'>): PoolStats {
    const { acquired, waited, acquireSeconds } = this
    return { ...now, acquired, waited, acquireSeconds, timeouts: { ...this.timeouts } }
  }
}

function timeoutOf(err: unknown): DatabaseTimeout | undefined {
  const { code, message } = (err ?? {}) as { code?: string; message?: string }
  if (code === '57014') return 'statement' // query_canceled: statement_timeout (or an operator's pg_cancel_backend)
  if (code?.startsWith('SQLITE_BUSY')) return 'busy'
  if (/Query read timeout/.test(message ?? '')) return 'query'
  if (/timeout exceeded when trying to connect/.test(message ?? '')) return 'connect'
  return undefined
}

/** `inner`, counting in `meter` the connections it lends, the time spent waiting for them and the queries that time out. */
export function meteredDriver(inner: Driver, meter: DriverMeter): Driver {
  const watched = new WeakSet<DatabaseConnection>()
  return delegatingDriver(inner, {
    async acquireConnection() {
      const started = meter.startAcquire()
      let connection: DatabaseConnection
      try {
        connection = await inner.acquireConnection()
      } catch (err) {
        meter.endAcquire(started, err)
        throw err
      }
      meter.endAcquire(started)
      if (!watched.has(connection)) {
        watched.add(connection)
        const execute = connection.executeQuery.bind(connection)
        const stream = connection.streamQuery.bind(connection)
        connection.executeQuery = async (query) => {
          try {
            return await execute(query)
          } catch (err) {
            meter.failed(err)
            throw err
          }
        }
        connection.streamQuery = async function* (query, chunkSize) {
          try {
            yield* stream(query, chunkSize)
          } catch (err) {
            meter.failed(err)
            throw err
          }
        }
      }
      return connection
    },
    async releaseConnection(connection) {
      meter.lent--
      await inner.releaseConnection(connection)
    },
  })
}
