import type { AlarmEventsTable, AlarmHistoryTable, AlarmsTable, Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

// Rows per multi-row INSERT: stays far below SQLite's bound-parameter limit (32766) for every table here.
const CHUNK = 500

async function inChunks<T>(rows: T[], write: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await write(rows.slice(i, i + CHUNK))
}

export const insertAlarms = (db: Db, rows: AlarmsTable[]) => inChunks(rows, (c) => db.insertInto('alarms').values(c).execute())
export const insertAlarmEvents = (db: Db, rows: AlarmEventsTable[]) => inChunks(rows, (c) => db.insertInto('alarm_events').values(c).execute())
export const insertAlarmHistory = (db: Db, rows: AlarmHistoryTable[]) => inChunks(rows, (c) => db.insertInto('alarm_history').values(c).execute())

/** Event ids already stored for the site, each with the alarm it applied to. */
export async function findKnownEventIds(db: Db, orgId: OrgId, siteCode: string, eventIds: string[]): Promise<Map<string, string | null>> {
  const known = new Map<string, string | null>()
  for (let i = 0; i < eventIds.length; i += CHUNK) {
    const rows = await db.selectFrom('alarm_events').select(['event_id', 'alarm_id'])
      .where('org_id', '=', orgId).where('site_code', '=', siteCode).where('event_id', 'in', eventIds.slice(i, i + CHUNK))
      .execute()
    for (const r of rows) known.set(r.event_id, r.alarm_id)
  }
  return known
}

export async function findOpenAlarms(db: Db, orgId: OrgId, siteCode: string, activeKeys: string[]): Promise<AlarmsTable[]> {
  const out: AlarmsTable[] = []
  for (let i = 0; i < activeKeys.length; i += CHUNK) {
    out.push(...await db.selectFrom('alarms').selectAll()
      .where('org_id', '=', orgId).where('site_code', '=', siteCode).where('active_key', 'in', activeKeys.slice(i, i + CHUNK))
      .execute())
  }
  return out
}

export function findAlarm(db: Db, orgId: OrgId, siteCode: string, alarmId: string) {
  return db.selectFrom('alarms').selectAll()
    .where('org_id', '=', orgId).where('site_code', '=', siteCode).where('id', '=', alarmId)
    .executeTakeFirst()
}

export type AlarmChanges = Partial<Omit<AlarmsTable, 'org_id' | 'site_code' | 'id' | 'version'>>

/**
 * Optimistic write: applies only when the row still has `version` (nobody wrote it since it was read) and bumps
 * it. Returns false when another writer got there first; the caller retries from a fresh read.
 */
export async function updateAlarmIfVersion(db: Db, orgId: OrgId, siteCode: string, alarmId: string, version: number, changes: AlarmChanges, newVersion = version + 1): Promise<boolean> {
  if (newVersion <= version) throw new TypeError('an alarm write must raise its version')
  const result = await db.updateTable('alarms').set({ ...changes, version: newVersion })
    .where('org_id', '=', orgId).where('site_code', '=', siteCode).where('id', '=', alarmId).where('version', '=', version)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export function listAlarmHistory(db: Db, orgId: OrgId, siteCode: string, alarmId: string) {
  return db.selectFrom('alarm_history').selectAll()
    .where('org_id', '=', orgId).where('site_code', '=', siteCode).where('alarm_id', '=', alarmId)
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
    query = query.where((eb) => eb.or([
      eb('changed_at', '<', before.changedAt),
      eb.and([eb('changed_at', '=', before.changedAt), eb('id', '<', before.id)]),
    ]))
  }
  return query.orderBy('changed_at', 'desc').orderBy('id', 'desc').limit(filter.limit + 1).execute()
}

export function findExpiredShelves(db: Db, orgId: OrgId, siteCode: string, now: number) {
  return db.selectFrom('alarms').selectAll()
    .where('org_id', '=', orgId).where('site_code', '=', siteCode).where('shelved_until', '<=', now)
    .execute()
}

export function listActivationEvents(db: Db, orgId: OrgId, siteCode: string, from: number, to: number) {
  return db.selectFrom('alarm_events').select(['instance_id', 'condition', 'priority', 'occurred_at', 'effect'])
    .where('org_id', '=', orgId).where('site_code', '=', siteCode)
    .where('occurred_at', '>=', from).where('occurred_at', '<', to)
    .where('effect', 'in', ['activated', 'suppressed'])
    .orderBy('occurred_at')
    .execute()
}

export async function countAlarmsOfSite(db: Db, orgId: OrgId, siteCode: string): Promise<number> {
  const row = await db.selectFrom('alarms').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId).where('site_code', '=', siteCode)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
