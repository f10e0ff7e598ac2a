import type { FastifyBaseLogger } from 'fastify'
import { sql, type RawBuilder } from 'kysely'
import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle, Dialect } from '../../../db/connect.ts'
import { LINKED_TABLES, PULLED_TABLES, PUSHED_TABLES } from '../../../db/link-triggers.ts'
import type { Db } from '../../../db/schema.ts'
import { withSystemScope } from '../../../db/tenant-scope.ts'
import { startPeriodicJob } from '../../../jobs/periodic.ts'
import { ackedCursor, START, type Cursor } from './store.ts'

/**
 * Outbox retention (ARCHITECTURE.md § Fleet link): deletes the `link_outbox` rows nobody can need any more, in
 * bounded windows, each its own short statement (no long transaction, so no writer waits and, on PostgreSQL, the
 * link readers' horizon — the oldest running transaction — is never held back for long).
 *
 * A row goes when all of these hold:
 * 1. it is older than the retention (`at`, the database's time, against the injected clock);
 * 2. no peer may still read it (`neededBy`): in the cloud, every site server ever enrolled reads the cloud's tables of
 *    its sites, not of its own origin, after the cursor it last reported pulling to (its heartbeat's `pulledTo`; none
 *    reported yet: from the start); a server never enrolled is seeded from a package at a cursor taken then. On a site
 *    server, the cloud takes what was made here after its acknowledged mark (`link_peer.acked_tx`, `acked_seq`: it skips
 *    every change at or below its mark in (tx, seq) order); a server not enrolled keeps all of it,
 *    because its first enrolment pushes the outbox from seq 0 (that is how the history of a site server that held
 *    data before enrolling reaches the cloud);
 * 3. nothing reads it as a latest change: `latestChange` (the conflict rule, GET /api/link/last-change) asks for the
 *    newest row of a key, optionally of another origin than one server, so the newest row of every
 *    (table, key, origin) stays — except for audit_events and link_conflicts, which neither reads — and a key whose
 *    newest row is a delete that may go (on a site server; in the cloud only for the site's tables, since the
 *    cloud's tombstones are what the conflict rule finds a delete against an edit by) loses all its rows at once,
 *    once every one of them may go.
 */

/** The tables whose rows no reader asks the latest change of (last-change does not offer them; no site edits them). */
const UNREAD_TABLES: readonly string[] = ['audit_events', 'link_conflicts']

/** Tables whose tombstones may go (with the key's whole history) once nobody needs them. */
const CLOUD_TOMBSTONES_DROPPABLE: readonly string[] = LINKED_TABLES.filter((t) => t.direction === 'up').map((t) => t.name)

/** Rows one delete statement looks at (and so deletes at most). */
export const DEFAULT_WINDOW_ROWS = 500
/** How often the sweep runs (the first one a minute after the start). */
export const OUTBOX_SWEEP_INTERVAL_MS = 3_600_000
const FIRST_SWEEP_MS = 60_000

export interface RetentionOptions {
  mode: 'cloud' | 'site'
  /** Rows younger than this stay whatever else holds (SITEGRID_LINK_OUTBOX_RETENTION_DAYS). */
  retentionMs: number
  windowRows?: number
  /** Called after each delete statement with the rows it deleted (tests check the bound). */
  onDelete?: (deleted: number) => void
  /** Only these organisations (tests share a database); every one by default. */
  orgs?: readonly string[]
}

export interface SweepSummary {
  orgs: number
  deleted: number
  statements: number
}

/** A peer's claim: rows of these tables (and sites), not of this origin, after this cursor. */
interface Need {
  tables: readonly string[]
  sites?: readonly string[]
  notOrigin?: string
  onlyOrigin?: string
  after?: Cursor
}

const list = (values: readonly string[]) => sql.join(values.map((v) => sql`${v}`))

/** `alias` is one of the sweep's own names (o, d), never input. */
function neededBy(needs: readonly Need[], alias: string): RawBuilder<unknown> {
  if (needs.length === 0) return sql`1 = 0`
  const col = (c: string) => sql.ref(`${alias}.${c}`)
  return sql.join(
    needs.map((n) => {
      const parts: RawBuilder<unknown>[] = [sql`${col('table_name')} in (${list(n.tables)})`]
      if (n.sites !== undefined) parts.push(n.sites.length === 0 ? sql`1 = 0` : sql`${col('site_code')} in (${list(n.sites)})`)
      if (n.notOrigin !== undefined) parts.push(sql`${col('origin')} <> ${n.notOrigin}`)
      if (n.onlyOrigin !== undefined) parts.push(sql`${col('origin')} = ${n.onlyOrigin}`)
      if (n.after !== undefined) parts.push(sql`(${col('tx')}, ${col('seq')}) > (${n.after.tx}, ${n.after.seq})`)
      return sql`(${sql.join(parts, sql` and `)})`
    }),
    sql` or `,
  )
}

function pulledToOf(backlog: string | null): Cursor | undefined {
  if (backlog === null) return undefined
  try {
    const reported = (JSON.parse(backlog) as { pulledTo?: { tx?: unknown; seq?: unknown } } | null)?.pulledTo
    if (typeof reported?.tx !== 'number' || typeof reported.seq !== 'number') return undefined
    return { tx: reported.tx, seq: reported.seq }
  } catch {
    return undefined
  }
}

/** What the peers of this organisation may still read (module comment, rule 2). */
async function needsOf(db: Db, mode: 'cloud' | 'site', orgId: string): Promise<Need[]> {
  if (mode === 'cloud') {
    const servers = await db
      .selectFrom('site_servers')
      .select(['id', 'sites', 'enrolled_at', 'backlog'])
      .where('org_id', '=', orgId)
      .where('enrolled_at', 'is not', null)
      .execute()
    return servers.map((s) => ({
      tables: PULLED_TABLES,
      sites: JSON.parse(s.sites) as string[],
      notOrigin: s.id,
      after: pulledToOf(s.backlog) ?? START,
    }))
  }
  const peer = await db.selectFrom('link_peer').select(['acked_tx', 'acked_seq']).where('org_id', '=', orgId).executeTakeFirst()
  // The cloud skips every change at or below its mark of this server (apply-push.ts), and (acked_tx, acked_seq) is the
  // mark it answered. Not enrolled: everything made here waits for the first push.
  return [{ tables: PUSHED_TABLES, onlyOrigin: '', ...(peer ? { after: ackedCursor(peer) } : {}) }]
}

/** PostgreSQL: only rows of transactions older than every running one (what a link reader can already see). */
function stable(dialect: Dialect, alias: string): RawBuilder<unknown> {
  return dialect === 'postgres' ? sql` and ${sql.ref(`${alias}.tx`)} < pg_snapshot_xmin(pg_current_snapshot())::text::bigint` : sql``
}

function unstable(dialect: Dialect, alias: string): RawBuilder<unknown> {
  return dialect === 'postgres' ? sql` or ${sql.ref(`${alias}.tx`)} >= pg_snapshot_xmin(pg_current_snapshot())::text::bigint` : sql``
}

/** Deletes what may go of one organisation's outbox, window by window; answers the rows deleted and the statements. */
async function sweepOrg(handle: DatabaseHandle, orgId: string, cutoff: number, options: RetentionOptions) {
  const { db, dialect } = handle
  const windowRows = options.windowRows ?? DEFAULT_WINDOW_ROWS
  const needs = await needsOf(db, options.mode, orgId)
  const droppable = options.mode === 'site' ? PUSHED_TABLES.concat(['link_conflicts']) : CLOUD_TOMBSTONES_DROPPABLE
  const sameKey = (alias: string, other: string) =>
    sql`${sql.ref(`${alias}.org_id`)} = ${sql.ref(`${other}.org_id`)} and ${sql.ref(`${alias}.table_name`)} = ${sql.ref(`${other}.table_name`)} and ${sql.ref(`${alias}.row_key`)} = ${sql.ref(`${other}.row_key`)}`
  // The rows of a key that is gone: its newest row is a delete that may go, and so may every older row of the key (the
  // tombstone never goes before them: the key would then show an older change as its latest). The newest row is
  // found by its seq, so that PostgreSQL looks it up per row rather than hashing every tombstone of the table.
  const keyGone = sql`(link_outbox.table_name in (${list(droppable)}) and exists (
      select 1 from link_outbox d where d.org_id = link_outbox.org_id
        and d.seq = (select max(m.seq) from link_outbox m where ${sameKey('m', 'link_outbox')})
        and d.op = 'delete' and d.at <= ${cutoff}${stable(dialect, 'd')}
        and not (${neededBy(needs, 'd')})
        and not exists (select 1 from link_outbox e where ${sameKey('e', 'd')} and e.seq < d.seq
          and (e.at > ${cutoff} or ${neededBy(needs, 'e')}${unstable(dialect, 'e')}))))`
  const superseded = sql`exists (select 1 from link_outbox n where ${sameKey('n', 'link_outbox')} and n.origin = link_outbox.origin and n.seq > link_outbox.seq)`

  // SQLite: tx is always 0 there; naming it lets the cursor index (org_id, tx, seq) serve the window as a range
  // (otherwise SQLite reads the organisation's whole outbox through another index for each window).
  const inOrder = dialect === 'sqlite' ? sql` and tx = 0` : sql``
  let deleted = 0
  let statements = 0
  let from = 0
  for (;;) {
    const { rows } = await sql<{ seq: number | string; at: number | string }>`
      select seq, at from link_outbox where org_id = ${orgId}${inOrder} and seq > ${from} order by seq limit ${windowRows}`.execute(db)
    statements += 1
    if (rows.length === 0 || Number(rows[0]!.at) > cutoff) break
    const to = Number(rows.at(-1)!.seq)
    const result =
      await sql`delete from link_outbox where org_id = ${orgId}${inOrder} and seq > ${from} and seq <= ${to} and at <= ${cutoff}${stable(dialect, 'link_outbox')}
      and not (${neededBy(needs, 'link_outbox')})
      and (link_outbox.table_name in (${list(UNREAD_TABLES)}) or ${superseded} or ${keyGone})`.execute(db)
    statements += 1
    const n = Number(result.numAffectedRows ?? 0)
    options.onDelete?.(n)
    deleted += n
    if (rows.length < windowRows) break
    from = to
  }
  return { deleted, statements }
}

/** One sweep over every organisation (in the system scope: row-level security would hide the others). */
export async function sweepOutbox(handle: DatabaseHandle, clock: Clock, options: RetentionOptions): Promise<SweepSummary> {
  return withSystemScope(async () => {
    const cutoff = clock.now() - options.retentionMs
    let query = handle.db.selectFrom('orgs').select('id')
    if (options.orgs !== undefined) query = query.where('id', 'in', options.orgs.length === 0 ? [''] : options.orgs)
    const orgs = await query.execute()
    const summary: SweepSummary = { orgs: orgs.length, deleted: 0, statements: 0 }
    for (const org of orgs) {
      const done = await sweepOrg(handle, org.id, cutoff, options)
      summary.deleted += done.deleted
      summary.statements += done.statements
    }
    return summary
  })
}

/**
 * Sweeps every `intervalMs` (first a minute after the start), one sweep at a time in this process; started with the
 * server (cli/serve.ts), stopped on close. A failed sweep is logged and the next one tries again; each sweep logs
 * what it deleted. Safe with N processes (each delete is idempotent).
 */
export function startOutboxRetentionJob(
  handle: DatabaseHandle,
  clock: Clock,
  options: RetentionOptions,
  log: FastifyBaseLogger,
  intervalMs = OUTBOX_SWEEP_INTERVAL_MS,
) {
  return startPeriodicJob(
    {
      job: 'link-outbox-retention',
      firstMs: Math.min(FIRST_SWEEP_MS, intervalMs),
      intervalMs,
      run: async () => {
        const started = performance.now()
        const summary = await sweepOutbox(handle, clock, options)
        return { ...summary, retentionMs: options.retentionMs, ms: Math.round(performance.now() - started) }
      },
      done: 'link outbox swept',
      failed: 'link outbox sweep failed',
    },
    log,
  )
}
