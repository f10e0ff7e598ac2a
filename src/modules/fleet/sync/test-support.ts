import { sql } from 'kysely'
import type { Db } from '../../../db/schema.ts'
import { rowKey, type Change } from './outbox-port.ts'

// Builders for the sync engine's tests: rows of the linked tables and changes made by hand, as a sender's outbox
// would hold them.

export const T0 = Date.UTC(2026, 0, 5, 6, 0, 0)

export function siteRow(orgId: string, code: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    org_id: orgId,
    code,
    name: `Site ${code}`,
    description: null,
    location: null,
    time_zone: 'Australia/Perth',
    status: 1,
    created_at: T0,
    updated_at: T0,
    ...over,
  }
}

export function controllerRow(orgId: string, site: string, id: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    org_id: orgId,
    site_code: site,
    id,
    name: `PLC ${id}`,
    platform: 2,
    firmware_version: '33.011',
    asset_number: `A-${id}`,
    protocol: 'cip',
    ip_address: '10.0.0.1',
    port: 44818,
    cip_path: '1,0',
    poll_interval_ms: 250,
    timeout_ms: 5000,
    retry_delay_ms: 5000,
    max_retries: 3,
    edge_id: null,
    edge_plc_id: null,
    created_at: T0,
    updated_at: T0,
    ...over,
  }
}

export function instanceRow(orgId: string, site: string, id: string, controllerId: string): Record<string, unknown> {
  return {
    org_id: orgId,
    site_code: site,
    id,
    name: `Pump ${id}`,
    type_id: 'generic',
    type_version: null,
    asset_number: `I-${id}`,
    controller_id: controllerId,
    area: null,
    tag_mappings: JSON.stringify({ pv: 'Pump.PV' }),
    tag_count: 1,
    config: '{}',
    created_at: T0,
    updated_at: T0,
  }
}

export function commandRow(orgId: string, site: string, id: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    org_id: orgId,
    id,
    site_code: site,
    alarm_id: 'alm_1',
    action: 'acknowledge',
    body: '{}',
    actor: JSON.stringify({ kind: 'user', subject: 'usr_1', role: 'admin' }),
    created_at: T0,
    status: 'pending',
    result: null,
    settled_at: null,
    ...over,
  }
}

export function auditRow(orgId: string, id: string, action: string): Record<string, unknown> {
  return { org_id: orgId, id, at: T0, actor_kind: 'user', actor_id: 'usr_1', action, target: 'x', detail: null }
}

export function alarmEventRow(orgId: string, site: string, eventId: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    org_id: orgId,
    site_code: site,
    event_id: eventId,
    alarm_id: null,
    instance_id: 'ins_pump',
    condition: 'HI',
    priority: 'high',
    is_active: 1,
    occurred_at: T0,
    received_at: T0 + 5,
    message: `event ${eventId} — ü`,
    value: 12.5,
    limit_value: 10,
    effect: 'activated',
    ...over,
  }
}

const KEYS: Record<string, string[]> = {
  sites: ['code'],
  controllers: ['site_code', 'id'],
  alarm_events: ['site_code', 'event_id'],
  audit_events: ['id'],
  link_commands: ['id'],
  historian_batches: ['id'],
}

/** A change as a site's outbox holds it. */
export function change(
  seq: number,
  table: string,
  row: Record<string, unknown>,
  o: { op?: 'upsert' | 'delete'; base?: number | null; site?: string; tx?: number; origin?: string } = {},
): Change {
  const key = KEYS[table]!.map((c) => row[c] as string | number)
  return {
    seq,
    tx: o.tx ?? 0,
    table,
    site: o.site ?? (table === 'sites' ? String(row.code) : table === 'audit_events' ? '' : String(row.site_code)),
    key,
    op: o.op ?? 'upsert',
    row: row as Change['row'],
    base: o.base ?? null,
    origin: o.origin ?? '',
    at: T0 + seq,
  }
}

/**
 * Writes a row as a local change of this server and answers the outbox seq of that change: the triggers record it
 * (once the outbox is there); where they do not, the test records it itself, as they would.
 */
export async function localUpsert(db: Db, table: string, row: Record<string, unknown>): Promise<number> {
  const before = await maxSeq(db)
  const columns = Object.keys(row)
  const conflictKey = ['org_id', ...KEYS[table]!]
  const others = columns.filter((c) => !conflictKey.includes(c))
  await sql`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))}) values (${sql.join(columns.map((c) => row[c]))})
    on conflict (${sql.join(conflictKey.map((c) => sql.ref(c)))}) do update set ${sql.join(others.map((c) => sql`${sql.ref(c)} = excluded.${sql.ref(c)}`))}`.execute(
    db,
  )
  return recorded(db, before, table, row, 'upsert')
}

export async function localDelete(db: Db, table: string, row: Record<string, unknown>): Promise<number> {
  const before = await maxSeq(db)
  const key = ['org_id', ...KEYS[table]!]
  await sql`delete from ${sql.table(table)} where ${sql.join(
    key.map((c) => sql`${sql.ref(c)} = ${row[c]}`),
    sql` and `,
  )}`.execute(db)
  return recorded(db, before, table, row, 'delete')
}

async function maxSeq(db: Db): Promise<number> {
  const { rows } = await sql<{ seq: number | null }>`select max(seq) as seq from link_outbox`.execute(db)
  return Number(rows[0]?.seq ?? 0)
}

async function recorded(db: Db, before: number, table: string, row: Record<string, unknown>, op: string): Promise<number> {
  const after = await maxSeq(db)
  if (after > before) return after
  const key = KEYS[table]!.map((c) => row[c])
  const site = table === 'sites' ? String(row.code) : table === 'audit_events' ? '' : String(row.site_code)
  const { rows } = await sql<{ seq: number }>`insert into link_outbox (org_id, table_name, site_code, row_key, op, "row", base, origin, at)
    values (${row.org_id}, ${table}, ${site}, ${rowKey(key)}, ${op}, ${JSON.stringify(row)}, ${null}, '', ${T0}) returning seq`.execute(db)
  return Number(rows[0]!.seq)
}

export async function countRows(db: Db, table: string, orgId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where org_id = ${orgId}`.execute(db)
  return Number(rows[0]!.n)
}
