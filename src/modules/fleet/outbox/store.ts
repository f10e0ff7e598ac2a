import { sql, type RawBuilder } from 'kysely'
import type { Dialect } from '../../../db/connect.ts'
import { rowKeySql, type LinkedTable } from '../../../db/link-triggers.ts'
import { inMultiRowStatements } from '../../../db/multi-row.ts'
import type { Db } from '../../../db/schema.ts'

/**
 * A position in a server's outbox. SQLite has one writer at a time, so its seq order is commit order and `tx` is 0.
 * On PostgreSQL two transactions can commit out of seq order, so a reader pages by (tx, seq) and reads only the
 * changes of transactions older than every transaction still running (see `stable`): every change it has not read
 * yet then lies after its cursor.
 */
export interface Cursor {
  tx: number
  seq: number
}

export const START: Cursor = { tx: 0, seq: 0 }

/** Site server: the cloud's acknowledged mark of this outbox (link_peer), where the push continues. */
export function ackedCursor(peer: { acked_tx: number | string; acked_seq: number | string }): Cursor {
  return { tx: Number(peer.acked_tx), seq: Number(peer.acked_seq) }
}

/** Whether `a` lies after `b` in outbox order ((tx, seq), as a reader pages). */
export function isAfter(a: Cursor, b: Cursor): boolean {
  return a.tx > b.tx || (a.tx === b.tx && a.seq > b.seq)
}

/** One recorded change, as it travels on the link (the sync module's ChangeSchema is its wire form). */
export interface Change {
  seq: number
  tx: number
  table: string
  /** The row's site; '' for organisation-wide rows (audit_events). */
  site: string
  /** The primary-key values after org_id, in key order. */
  key: Array<string | number>
  op: 'upsert' | 'delete'
  /** The row after the change, or before a delete (org_id included). */
  row: Record<string, string | number | null>
  /** Site edits of the cloud's tables: the cloud seq of the version the row was based on. */
  base: number | null
  /** '' for a change made on this server; else the peer it came from. */
  origin: string
  /** Epoch milliseconds, the database's clock. */
  at: number
  /**
   * The row's newest change lies before this one in outbox order (PostgreSQL: a transaction that took its id first
   * wrote the row after this one committed), so the receiver already holds a newer image: it skips this one. Absent:
   * false (always, on SQLite).
   */
  superseded?: boolean
}

/** link_outbox.row_key, link_base.row_key and link_conflicts.row_key: the key as JSON.stringify writes it (the triggers match it). */
export function rowKey(key: readonly unknown[]): string {
  return JSON.stringify(key)
}

export interface ChangeFilter {
  tables: readonly string[]
  /** Only these sites ('' selects organisation-wide rows). */
  sites?: readonly string[]
  origin?: { only?: string; not?: string }
}

interface OutboxRow {
  superseded?: boolean
  seq: number | string
  tx: number | string
  table_name: string
  site_code: string
  row_key: string
  op: string
  row: string
  base: number | string | null
  origin: string
  at: number | string
}

function toChange(r: OutboxRow): Change {
  return {
    seq: Number(r.seq),
    tx: Number(r.tx),
    table: r.table_name,
    site: r.site_code,
    key: JSON.parse(r.row_key) as Array<string | number>,
    op: r.op === 'delete' ? 'delete' : 'upsert',
    row: JSON.parse(r.row) as Record<string, string | number | null>,
    base: r.base === null ? null : Number(r.base),
    origin: r.origin,
    at: Number(r.at),
    ...(r.superseded ? { superseded: true } : {}),
  }
}

/** PostgreSQL: only changes of transactions that ended before the oldest one still running (their set can no longer grow). */
function stable(dialect: Dialect): RawBuilder<unknown> {
  return dialect === 'postgres' ? sql` and tx < pg_snapshot_xmin(pg_current_snapshot())::text::bigint` : sql``
}

function filterOf(f: ChangeFilter): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [sql`table_name in (${sql.join(f.tables.map((t) => sql`${t}`))})`]
  if (f.sites !== undefined) parts.push(f.sites.length === 0 ? sql`1 = 0` : sql`site_code in (${sql.join(f.sites.map((s) => sql`${s}`))})`)
  parts.push(...originOf(f, sql.ref('origin')))
  return sql.join(parts, sql` and `)
}

function originOf(f: ChangeFilter, column: RawBuilder<unknown>): RawBuilder<unknown>[] {
  const parts: RawBuilder<unknown>[] = []
  if (f.origin?.only !== undefined) parts.push(sql`${column} = ${f.origin.only}`)
  if (f.origin?.not !== undefined) parts.push(sql`${column} <> ${f.origin.not}`)
  return parts
}

/**
 * The changes after `after`, in (tx, seq) order, at most `limit`.
 *
 * Writers of one row take its lock in turn, so one row's seq order is the order of its writes, while (tx, seq) order
 * is not: on PostgreSQL a transaction that took its id first can write the row after another committed, and a reader
 * then reads the newer image first. A change whose row's newest change of this read (same origin filter) lies before
 * it in (tx, seq) order is answered `superseded`: the reader has that newer image by then (read before, or in the
 * tenant package a seed took after its cursor), so applying the older one would take the row back. Any other older
 * image is followed by the newest, so the receiver ends with it. A newer change of another origin does not count: a
 * site edit older than the cloud image the site applied since still goes up, to be settled by the conflict rule.
 * One index probe per change of the page (link_outbox_row, newest seq first). `seededBy` (a site server's pull): a
 * change at or below the version that server's seed carried of its row is superseded too (seedVersionSql), on both
 * databases: the seed package holds that image or a newer one.
 */
export async function readChanges(
  db: Db,
  dialect: Dialect,
  orgId: string,
  after: Cursor,
  options: ChangeFilter & { limit: number; seededBy?: string },
): Promise<Change[]> {
  const page = sql<OutboxRow>`select seq, tx, table_name, site_code, row_key, op, "row", base, origin, at from link_outbox
    where org_id = ${orgId} and (tx, seq) > (${after.tx}, ${after.seq})${stable(dialect)} and ${filterOf(options)}
    order by tx, seq limit ${options.limit}`
  const superseded: RawBuilder<unknown>[] = []
  if (dialect === 'postgres') {
    const sameRow = [sql`newest.org_id = ${orgId}`, sql`newest.table_name = page.table_name`, sql`newest.row_key = page.row_key`]
    superseded.push(sql`(select newest.tx from link_outbox newest where ${sql.join([...sameRow, ...originOf(options, sql.ref('newest.origin'))], sql` and `)}
      order by newest.seq desc limit 1) < page.tx`)
  }
  if (options.seededBy !== undefined)
    superseded.push(sql`exists (select 1 from link_seed_versions v where v.org_id = ${orgId} and v.server_id = ${options.seededBy}
      and v.table_name = page.table_name and v.row_key = page.row_key and v.version >= page.seq)`)
  if (superseded.length === 0) return (await page.execute(db)).rows.map(toChange)
  const { rows } = await sql<OutboxRow>`with page as (${page})
    select page.*, ${sql.join(superseded, sql` or `)} as superseded from page order by tx, seq`.execute(db)
  return rows.map(toChange)
}

/**
 * A seed's version of a row of `table` (its columns qualified by `ref`, the quoted table name), read in the statement
 * that reads the row: the seq of the row's newest change when that change lies after the seed's cursor, else null. The
 * pull replays every change after the cursor, so those rows need their exact version (link_seed_versions); the others'
 * version is at most the cursor's, which the site records as their base.
 */
export function seedVersionSql(dialect: Dialect, table: LinkedTable, ref: string, cursor: Cursor): RawBuilder<unknown> {
  return sql`select case when (o.tx, o.seq) > (${cursor.tx}, ${cursor.seq}) then o.seq end from link_outbox o
    where o.org_id = ${sql.raw(ref)}.org_id and o.table_name = ${table.name} and o.row_key = ${rowKeySql(dialect === 'postgres', table.key, ref)}
    order by o.seq desc limit 1`
}

/** Replaces what a server's seed of one site carried after its cursor (link_seed_versions), in one transaction. */
export async function replaceSeedVersions(
  db: Db,
  orgId: string,
  serverId: string,
  site: string,
  versions: ReadonlyArray<{ table: string; rowKey: string; version: number }>,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('link_seed_versions').where('org_id', '=', orgId).where('server_id', '=', serverId).where('site_code', '=', site).execute()
    const rows = versions.map((v) => ({ org_id: orgId, server_id: serverId, site_code: site, table_name: v.table, row_key: v.rowKey, version: v.version }))
    await inMultiRowStatements(rows, 6, (values) =>
      trx
        .insertInto('link_seed_versions')
        .values(values)
        .onConflict((oc) => oc.columns(['org_id', 'server_id', 'table_name', 'row_key']).doUpdateSet((eb) => ({ version: eb.ref('excluded.version') })))
        .execute(),
    )
  })
}

/** The version a server's seed carried of a row changed after the seed's cursor, or undefined. */
export async function seedVersion(db: Db, orgId: string, serverId: string, table: string, key: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('link_seed_versions')
    .select('version')
    .where('org_id', '=', orgId)
    .where('server_id', '=', serverId)
    .where('table_name', '=', table)
    .where('row_key', '=', key)
    .executeTakeFirst()
  return row === undefined ? undefined : Number(row.version)
}

/** A cursor such that every change readable now lies at or before it (a seed's starting point). */
export async function currentCursor(db: Db, dialect: Dialect, orgId: string): Promise<Cursor> {
  const { rows } = await sql<{ tx: number | string; seq: number | string }>`
    select tx, seq from link_outbox where org_id = ${orgId}${stable(dialect)} order by tx desc, seq desc limit 1`.execute(db)
  const last = rows[0]
  return last === undefined ? START : { tx: Number(last.tx), seq: Number(last.seq) }
}

/** What waits after `after`: how many changes, their bytes (the images' length) and the oldest one's time. */
export async function backlog(
  db: Db,
  dialect: Dialect,
  orgId: string,
  after: Cursor,
  filter: ChangeFilter,
): Promise<{ items: number; bytes: number; oldestAt: number | null }> {
  const { rows } = await sql<{ items: number | string; bytes: number | string | null; oldest: number | string | null }>`
    select count(*) as items, sum(length("row")) as bytes, min(at) as oldest from link_outbox
    where org_id = ${orgId} and (tx, seq) > (${after.tx}, ${after.seq}) and ${filterOf(filter)}`.execute(db)
  const r = rows[0]!
  return { items: Number(r.items), bytes: Number(r.bytes ?? 0), oldestAt: r.oldest === null ? null : Number(r.oldest) }
}

/** The latest change of one row after `afterSeq` (optionally from another origin than `notOrigin`), or undefined. */
export async function latestChange(
  db: Db,
  orgId: string,
  table: string,
  key: readonly unknown[],
  options: { afterSeq: number; notOrigin?: string },
): Promise<Change | undefined> {
  const not = options.notOrigin === undefined ? sql`` : sql` and origin <> ${options.notOrigin}`
  const { rows } = await sql<OutboxRow>`
    select seq, tx, table_name, site_code, row_key, op, "row", base, origin, at from link_outbox
    where org_id = ${orgId} and table_name = ${table} and row_key = ${rowKey(key)} and seq > ${options.afterSeq}${not}
    order by seq desc limit 1`.execute(db)
  return rows[0] === undefined ? undefined : toChange(rows[0])
}

/** Applying a peer's changes as its own origin: the triggers' part (db/link-triggers.ts). */
export { withApplyOrigin } from '../../../db/link-triggers.ts'
