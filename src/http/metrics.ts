import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { FastifyInstance } from 'fastify'
import type { DatabaseTimeout, PoolStats } from '../db/pool-meter.ts'
import { createAnswerSeries } from './answer-series.ts'
import type { TransferKind, TransferMeter } from './transfer-meter.ts'

/**
 * The process's metrics (docs/metrics.md lists them), one registry per application: the code that counts is handed
 * the few calls it needs (app.ts and cli/server.ts wire them), and no other file imports prom-client. Labels take
 * bounded values only: a route pattern, never a URL, a tenant or an id.
 */

/** The route label of a request no route matched (a 404 of an unknown path). */
export const UNMATCHED_ROUTE = '(unmatched)'

const PREFIX = 'sitegrid_'

/** The request duration histogram's bucket bounds, in seconds. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120] as const

export function createMetrics(deps: { poolStats: () => PoolStats }) {
  const registry = new Registry()
  const registers = [registry]
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name: PREFIX + name, help, labelNames, registers })
  const gauge = (name: string, help: string, read: (stats: PoolStats) => number) =>
    new Gauge({
      name: PREFIX + name,
      help,
      registers,
      collect() {
        this.set(read(deps.poolStats()))
      },
    })
  // A count the pool keeps itself: reread at each scrape, so the counter shows the pool's own total.
  const poolCounter = (name: string, help: string, read: (stats: PoolStats) => number) =>
    new Counter({
      name: PREFIX + name,
      help,
      registers,
      collect() {
        this.reset()
        this.inc(read(deps.poolStats()))
      },
    })

  // The answers are kept by answer-series.ts and written into these two at each scrape (issue 29, sixth pass).
  const answers = createAnswerSeries(DURATION_BUCKETS)
  new Counter<'route' | 'method' | 'status'>({
    name: `${PREFIX}http_requests_total`,
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'],
    registers,
    collect() {
      this.reset()
      for (const { labels, count } of answers.statuses()) this.inc(labels, count)
    },
  })
  new Histogram<'route' | 'method'>({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'Time from a request arriving to its answer sent, by route pattern and method',
    labelNames: ['route', 'method'],
    buckets: [...DURATION_BUCKETS],
    registers,
    collect() {
      // prom-client has no call that sets a series' buckets, sum and count: its table of series is written as its
      // `observe` leaves it (keyed by its label hash, in first-seen order), and its own export reads it.
      const table: Record<string, unknown> = {}
      for (const { labels, buckets, sum, count } of answers.durations()) {
        const bucketValues = Object.fromEntries(DURATION_BUCKETS.map((bound, i) => [bound, buckets[i]]))
        table[`route:${labels.route},method:${labels.method},`] = { labels, bucketValues, sum, count }
      }
      ;(this as unknown as { hashMap: Record<string, unknown> }).hashMap = table
    },
  })
  gauge('db_pool_max_connections', 'Connections the database pool may open (SQLite: 1)', (s) => s.size)
  gauge('db_pool_open_connections', 'Connections the database pool holds open', (s) => s.open)
  gauge('db_pool_idle_connections', 'Open connections no query or transaction holds', (s) => s.idle)
  gauge('db_pool_waiting_clients', 'Queries and transactions waiting for a connection now', (s) => s.waiting)
  poolCounter('db_pool_acquires_total', 'Connections lent by the pool', (s) => s.acquired)
  poolCounter('db_pool_waits_total', 'Connections asked for while none was free (the caller waited)', (s) => s.waited)
  poolCounter('db_pool_acquire_seconds_total', 'Seconds spent waiting for a connection (with the connect time of new ones)', (s) => s.acquireSeconds)
  new Counter<'kind'>({
    name: `${PREFIX}db_timeouts_total`,
    help: 'Queries failed on a timeout: statement (PostgreSQL statement_timeout), query (SITEGRID_DB_QUERY_TIMEOUT_MS), connect (no pool connection in time), busy (SQLite write lock)',
    labelNames: ['kind'],
    registers,
    collect() {
      this.reset()
      for (const [kind, n] of Object.entries(deps.poolStats().timeouts) as Array<[DatabaseTimeout, number]>) this.inc({ kind }, n)
    },
  })
  const running = new Gauge<'kind'>({ name: `${PREFIX}transfers_running`, help: 'Transfers under way, by kind', labelNames: ['kind'], registers })
  const transfers = counter('transfers_total', 'Transfers ended, by kind and outcome', ['kind', 'outcome'])
  const transferRows = counter('transfer_rows_total', 'Rows read (historian import, tenant import) or written (tenant export) by transfers', ['kind'])
  const transferBytes = counter('transfer_bytes_total', 'Bytes read (imports, staged packages) or sent (exports) by transfers', ['kind'])
  const refusals = counter('rate_limit_refusals_total', 'Requests refused with 429 by a rate limit: credential (per key or token) or sign_in (per address)', [
    'limiter',
  ])
  const lockouts = counter('sign_in_lockouts_total', 'Site-PIN sign-in failures that locked their account or client address', ['subject'])
  const lockedRefusals = counter('sign_in_locked_refusals_total', 'Site-PIN sign-ins refused because the account or address was locked', ['subject'])
  const reminderRuns = counter('reminder_runs_total', 'Runs of the key-expiry reminder job, by outcome', ['outcome'])
  const reminders = counter('reminders_total', 'Key-expiry reminders handled by the job, by outcome', ['outcome'])
  const reminderSuccess = new Gauge({
    name: `${PREFIX}reminder_last_success_timestamp_seconds`,
    help: 'When the reminder job last ran without failing (Unix time)',
    registers,
  })
  // Every series at 0 from the start: a rate over a series that appears only at its first event reads as no data.
  for (const kind of ['historian_import', 'tenant_export', 'tenant_import'] satisfies TransferKind[]) {
    running.set({ kind }, 0)
    transferRows.inc({ kind }, 0)
    transferBytes.inc({ kind }, 0)
    for (const outcome of ['complete', 'failed']) transfers.inc({ kind, outcome }, 0)
  }
  for (const limiter of ['credential', 'sign_in']) refusals.inc({ limiter }, 0)
  for (const subject of ['account', 'address']) {
    lockouts.inc({ subject }, 0)
    lockedRefusals.inc({ subject }, 0)
  }
  for (const outcome of ['done', 'failed']) reminderRuns.inc({ outcome }, 0)
  for (const outcome of ['sent', 'skipped', 'failed']) reminders.inc({ outcome }, 0)

  return {
    registry,
    /** One answer sent: `route` is the route's pattern (UNMATCHED_ROUTE when none matched). */
    request(route: string, method: string, status: number, seconds: number): void {
      answers.add(route, method, status, seconds)
    },
    rateLimited(limiter: 'credential' | 'sign_in'): void {
      refusals.inc({ limiter })
    },
    /** Site-PIN sign-in: a failure that set a lock, a sign-in refused while locked. */
    signIn: {
      locked: (subject: 'account' | 'address') => lockouts.inc({ subject }),
      refused: (subject: 'account' | 'address') => lockedRefusals.inc({ subject }),
    },
    transfers(kind: TransferKind): TransferMeter {
      return {
        begin() {
          running.inc({ kind })
          let isEnded = false
          return {
            advanced(rows, bytes) {
              if (rows > 0) transferRows.inc({ kind }, rows)
              if (bytes > 0) transferBytes.inc({ kind }, bytes)
            },
            ended(outcome) {
              if (isEnded) return
              isEnded = true
              running.dec({ kind })
              transfers.inc({ kind, outcome })
            },
          }
        },
      }
    },
    /** A run of the reminder job ended; `summary` is the reminders service's (sent, skipped, failed …). */
    reminderRun(outcome: 'done' | 'failed', summary: object | undefined): void {
      reminderRuns.inc({ outcome })
      if (outcome === 'done') reminderSuccess.setToCurrentTime()
      const counts = (summary ?? {}) as Record<string, unknown>
      for (const key of ['sent', 'skipped', 'failed']) if (typeof counts[key] === 'number') reminders.inc({ outcome: key }, counts[key])
    },
  }
}

export type Metrics = ReturnType<typeof createMetrics>

/** The process's own: memory, CPU, handles, garbage collection, event-loop delay. Once per process (cli/server.ts). */
export function collectProcessMetrics(metrics: Metrics): void {
  collectDefaultMetrics({ register: metrics.registry })
}

/** Counts every answer of `app` by its route pattern, method and status, with its duration. */
export function installRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.request(request.routeOptions.url ?? UNMATCHED_ROUTE, request.method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
}
