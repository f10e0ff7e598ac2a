import { sql } from 'kysely'
import type { Dialect } from '../../db/connect.ts'
import type { AlarmEventsTable, AlarmHistoryTable, AlarmsTable, Db } from '../../db/schema.ts'
import { lockUntilCommit } from '../../db/transaction-lock.ts'
import type { OrgId } from '../../ids.ts'

// Ids per `IN (…)` list of the lookups.
const CHUNK = 2000
/** SQLite's bound-parameter limit (32 766 since 3.32; PostgreSQL's is 65 535): every statement here stays under it. */
const MAX_PARAMETERS = 32_766

/** Writes `rows` in statements of as many rows as the parameter limit allows (`columns` parameters a row). */
async function inStatements<T>(rows: T[], columns: number, write: (chunk: T[]) => Promise<unknown>): Promise<void> {
  const size = Math.max(1, Math.floor(MAX_PARAMETERS / columns))
  for (let i = 0; i < rows.length; i += size) await write(rows.slice(i, i + size))
}

const columnsOf = (rows: object[]) => Object.keys(rows[0] ?? {}).length

export const insertAlarmEvents = (db: Db, rows: AlarmEventsTable[]) =>
  inStatements(rows, columnsOf(rows), (c) => db.insertInto('alarm_events').values(c).execute())
export const insertAlarmHistory = (db: Db, rows: AlarmHistoryTable[]) =>
  inStatements(rows, columnsOf(rows), (c) => db.insertInto('alarm_history').values(c).execute())

/**
 * Raises new alarms in multi-row statements. A row whose tag already has an open alarm (the unique index on
 * `active_key`: a concurrent batch won the race) is skipped, not an error, so the transaction stays usable on
 * PostgreSQL; returns how many were inserted and the caller retries when that is fewer than it asked for.
 */
export async function insertNewAlarms(db: Db, rows: AlarmsTable[]): Promise<number> {
  let inserted = 0
  await inStatements(rows, columnsOf(rows), async (c) => {
    const result = await db
      .insertInto('alarms')
      .values(c)
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst()
    inserted += Number(result.numInsertedOrUpdatedRows ?? 0)
  })
  return inserted
}

/** What ingestion changes on an alarm it read (with the database type each is cast to in the VALUES list). */
const INGEST_COLUMNS = [
  ['message', 'text'],
  ['value', 'double precision'],
  ['limit_value', 'double precision'],
  ['last_event_at', 'bigint'],
  ['changed_at', 'bigint'],
  ['is_active', 'integer'],
  ['is_acknowledged', 'integer'],
  ['state', 'text'],
  ['activation_count', 'integer'],
  ['priority', 'text'],
  ['active_key', 'text'],
  ['shelved_until', 'bigint'],
  ['version', 'integer'],
] as const satisfies ReadonlyArray<readonly [keyof AlarmsTable, string]>

export interface VersionedAlarmWrite {
  row: AlarmsTable
  /** The version the row had when it was read: the write applies only if it still has it. */
  readVersion: number
}

/**
 * The set-based form of `updateAlarmIfVersion` for ingestion: one `UPDATE … FROM (VALUES …)` per chunk writes every
 * alarm of the batch, each only where its version is still the one read. Returns how many rows were written; fewer
 * than asked means another writer got there first (the caller retries the transaction). Both dialects accept it
 * (SQLite ≥ 3.33); every value is cast so that PostgreSQL types the VALUES columns.
 */
export async function updateAlarmsIfVersion(db: Db, orgId: OrgId, siteCode: string, writes: VersionedAlarmWrite[]): Promise<number> {
  let written = 0
  const names = ['id', 'read_version', ...INGEST_COLUMNS.map(([c]) => c)]
  await inStatements(writes, names.length, async (chunk) => {
    const rows = chunk.map(
      ({ row, readVersion }) =>
        sql`(${sql.join([
          sql`cast(${row.id} as text)`,
          sql`cast(${readVersion} as integer)`,
          ...INGEST_COLUMNS.map(([column, type]) => sql`cast(${row[column]} as ${sql.raw(type)})`),
        ])})`,
    )
    const result = await sql`with v(${sql.join(names.map((n) => sql.ref(n)))}) as (values ${sql.join(rows)})
      update alarms set ${sql.join(INGEST_COLUMNS.map(([c]) => sql`${sql.ref(c)} = v.${sql.ref(c)}`))}
      from v
      where alarms.org_id = ${orgId} and alarms.site_code = ${siteCode} and alarms.id = v.id and alarms.version = v.read_version`.execute(db)
    written += Number(result.numAffectedRows ?? 0)
  })
  return written
}

/**
 * Serialises the alarm writers of one site (ingestion, operator actions, shelve expiry) until the transaction ends,
 * so that a concurrent writer (in any process of a cell) waits for the one ahead instead of failing its version
 * check; a batch then reads the committed result of the one before it.
 */
export function lockSiteAlarms(db: Db, dialect: Dialect, orgId: OrgId, siteCode: string): Promise<void> {
  return lockUntilCommit(db, dialect, `alarms ${orgId} ${siteCode}`)
}

/** Event ids already stored for the site, each with the alarm it applied to. */
export async function findKnownEventIds(db: Db, orgId: OrgId, siteCode: string, eventIds: string[]): Promise<Map<string, string | null>> {
  const known = new Map<string, string | null>()
  for (let i = 0; i < eventIds.length; i += CHUNK) {
    const rows = await db
      .selectFrom('alarm_events')
      .select(['event_id', 'alarm_id'])
      .where('org_id', '=', orgId)
      .where('site_code', '=', siteCode)
      .where('event_id', 'in', eventIds.slice(i, i + CHUNK))
      .execute()
    for (const r of rows) known.set(r.event_id, r.alarm_id)
  }
  return known
}

export async function findOpenAlarms(db: Db, orgId: OrgId, siteCode: string, activeKeys: string[]): Promise<AlarmsTable[]> {
  const out: AlarmsTable[] = []
  for (let i = 0; i < activeKeys.length; i += CHUNK) {
    out.push(
      ...(await db
        .selectFrom('alarms')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('site_code', '=', siteCode)
        .where('active_key', 'in', activeKeys.slice(i, i + CHUNK))
        .execute()),
    )
  }
  return out
}

export function findAlarm(db: Db, orgId: OrgId, siteCode: string, alarmId: string) {
  return db.selectFrom('alarms').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode).where('id', '=', alarmId).executeTakeFirst()
}

export type AlarmChanges = Partial<Omit<AlarmsTable, 'org_id' | 'site_code' | 'id' | 'version'>>

/**
 * Optimistic write: applies only when the row still has `version` (nobody wrote it since it was read) and bumps
 * it. Returns false when another writer got there first; the caller retries from a fresh read.
 */
export async function updateAlarmIfVersion(
  db: Db,
  orgId: OrgId,
  siteCode: string,
  alarmId: string,
  version: number,
  changes: AlarmChanges,
  newVersion = version + 1,
): Promise<boolean> {
  if (newVersion <= version) throw new TypeError('an alarm write must raise its version')
  const result = await db
    .updateTable('alarms')
    .set({ ...changes, version: newVersion })
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('id', '=', alarmId)
    .where('version', '=', version)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export function listAlarmHistory(db: Db, orgId: OrgId, siteCode: string, alarmId: string) {
  return db
    .selectFrom('alarm_history')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('alarm_id', '=', alarmId)
    .orderBy('seq')
    .execute()
}

export interface AlarmListFilter {
  limit: number
  /** Keyset: strictly after (older than) this (changed_at, id) in the newest-first order. */
  before?: { changedAt: number; id: string }
  instanceId?: string
  states?: string[]
  priorities?: string[]
}

export function listAlarmsBySite(db: Db, orgId: OrgId, siteCode: string, filter: AlarmListFilter) {
  let query = db.selectFrom('alarms').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode)
  if (filter.instanceId !== undefined) query = query.where('instance_id', '=', filter.instanceId)
  if (filter.states?.length) query = query.where('state', 'in', filter.states)
  if (filter.priorities?.length) query = query.where('priority', 'in', filter.priorities)
  const before = filter.before
  if (before) {
    query = query.where((eb) => eb.or([eb('changed_at', '<', before.changedAt), eb.and([eb('changed_at', '=', before.changedAt), eb('id', '<', before.id)])]))
  }
  return query
    .orderBy('changed_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute()
}

export function findExpiredShelves(db: Db, orgId: OrgId, siteCode: string, now: number) {
  return db.selectFrom('alarms').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode).where('shelved_until', '<=', now).execute()
}

export function listActivationEvents(db: Db, orgId: OrgId, siteCode: string, from: number, to: number) {
  return db
    .selectFrom('alarm_events')
    .select(['instance_id', 'condition', 'priority', 'occurred_at', 'effect'])
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('occurred_at', '>=', from)
    .where('occurred_at', '<', to)
    .where('effect', 'in', ['activated', 'suppressed'])
    .orderBy('occurred_at')
    .execute()
}

export async function countAlarmsOfSite(db: Db, orgId: OrgId, siteCode: string): Promise<number> {
  const row = await db
    .selectFrom('alarms')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** A shelve window of a tag: [startsAt, endsAt) in event time. */
export interface ShelveWindow {
  tagKey: string
  startsAt: number
  endsAt: number
}

/** Records a shelve in force from `startsAt` until its planned expiry `endsAt`. */
export async function insertShelveWindow(
  db: Db,
  orgId: OrgId,
  siteCode: string,
  alarmId: string,
  seq: number,
  tagKey: string,
  startsAt: number,
  endsAt: number,
): Promise<void> {
  await db
    .insertInto('alarm_shelves')
    .values({ org_id: orgId, site_code: siteCode, alarm_id: alarmId, seq, tag_key: tagKey, starts_at: startsAt, ends_at: endsAt })
    .execute()
}

/** Ends the alarm's shelve in force at `at` (unshelve, out of service) instead of its planned expiry. */
export async function endShelveWindow(db: Db, orgId: OrgId, siteCode: string, alarmId: string, at: number): Promise<void> {
  await db
    .updateTable('alarm_shelves')
    .set({ ends_at: at })
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('alarm_id', '=', alarmId)
    .where('ends_at', '>', at)
    .execute()
}

/** The site's shelve windows that end after `after` (the earliest event of a batch): only those can hold its events. */
export async function findShelveWindowsEndingAfter(db: Db, orgId: OrgId, siteCode: string, after: number): Promise<ShelveWindow[]> {
  const rows = await db
    .selectFrom('alarm_shelves')
    .select(['tag_key', 'starts_at', 'ends_at'])
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('ends_at', '>', after)
    .execute()
  return rows.map((r) => ({ tagKey: r.tag_key, startsAt: Number(r.starts_at), endsAt: Number(r.ends_at) }))
}
