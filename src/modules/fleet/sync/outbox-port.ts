import { sql } from 'kysely'
import type { Dialect } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'

/**
 * What the sync engine uses of the outbox (modules/fleet/outbox, db/link-triggers.ts), in one place: until the
 * outbox lands these are stand-ins written to its interface (docs: the fleet brief), afterwards re-exports.
 */
export interface Cursor {
  tx: number
  seq: number
}

export interface Change {
  seq: number
  tx: number
  table: string
  site: string
  key: unknown[]
  op: 'upsert' | 'delete'
  row: Record<string, unknown>
  base: number | null
  origin: string
  at: number
}

export interface LinkedTable {
  name: string
  direction: 'down' | 'up' | 'both'
  siteColumn: string | null
  key: string[]
}

export const rowKey = (key: unknown[]) => JSON.stringify(key)

export const LINKED_TABLES: readonly LinkedTable[] = [
  { name: 'sites', direction: 'down', siteColumn: 'code', key: ['code'] },
  { name: 'controllers', direction: 'down', siteColumn: 'site_code', key: ['site_code', 'id'] },
  { name: 'instances', direction: 'down', siteColumn: 'site_code', key: ['site_code', 'id'] },
  { name: 'electrical_nodes', direction: 'down', siteColumn: 'site_code', key: ['site_code', 'id'] },
  { name: 'electrical_edges', direction: 'down', siteColumn: 'site_code', key: ['site_code', 'source_id', 'target_id', 'edge_type'] },
  { name: 'link_commands', direction: 'both', siteColumn: 'site_code', key: ['id'] },
  { name: 'link_conflicts', direction: 'down', siteColumn: 'site_code', key: ['id'] },
  { name: 'alarms', direction: 'up', siteColumn: 'site_code', key: ['site_code', 'id'] },
  { name: 'alarm_events', direction: 'up', siteColumn: 'site_code', key: ['site_code', 'event_id'] },
  { name: 'alarm_history', direction: 'up', siteColumn: 'site_code', key: ['site_code', 'alarm_id', 'seq'] },
  { name: 'alarm_shelves', direction: 'up', siteColumn: 'site_code', key: ['site_code', 'alarm_id', 'seq'] },
  { name: 'historian_batches', direction: 'up', siteColumn: 'site_code', key: ['id'] },
  { name: 'audit_events', direction: 'up', siteColumn: null, key: ['id'] },
]

/** Stand-in: the origin the triggers record while `fn` applies a peer's changes (SQLite: a table; PostgreSQL: a setting). */
export async function withApplyOrigin<T>(trx: Db, dialect: Dialect, origin: string, fn: () => Promise<T>): Promise<T> {
  if (dialect === 'sqlite') {
    const { rows } = await sql<{ origin: string }>`select origin from link_apply_origin`.execute(trx)
    const previous = rows[0]?.origin ?? ''
    await sql`update link_apply_origin set origin = ${origin}`.execute(trx)
    const result = await fn()
    await sql`update link_apply_origin set origin = ${previous}`.execute(trx)
    return result
  }
  const { rows } = await sql<{ origin: string | null }>`select current_setting('sitegrid.link_origin', true) as origin`.execute(trx)
  const previous = rows[0]?.origin ?? ''
  await sql`select set_config('sitegrid.link_origin', ${origin}, true)`.execute(trx)
  const result = await fn()
  await sql`select set_config('sitegrid.link_origin', ${previous}, true)`.execute(trx)
  return result
}

/** Stand-in: the latest change of one row in this server's outbox after `afterSeq`, optionally of another origin. */
export async function latestChange(
  db: Db,
  orgId: string,
  table: string,
  key: unknown[],
  o: { afterSeq: number; notOrigin?: string },
): Promise<Change | undefined> {
  let q = db
    .selectFrom('link_outbox')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('table_name', '=', table)
    .where('row_key', '=', rowKey(key))
    .where('seq', '>', o.afterSeq)
  if (o.notOrigin !== undefined) q = q.where('origin', '<>', o.notOrigin)
  const r = await q.orderBy('seq', 'desc').limit(1).executeTakeFirst()
  if (!r) return undefined
  return {
    seq: Number(r.seq),
    tx: Number(r.tx),
    table: r.table_name,
    site: r.site_code,
    key: JSON.parse(r.row_key) as unknown[],
    op: r.op as Change['op'],
    row: JSON.parse(r.row) as Record<string, unknown>,
    base: r.base === null ? null : Number(r.base),
    origin: r.origin,
    at: Number(r.at),
  }
}
