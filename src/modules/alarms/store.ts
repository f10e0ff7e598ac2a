import { CompiledQuery, sql } from 'kysely'
import type { Dialect } from '../../db/connect.ts'
import type { AlarmEventsTable, AlarmHistoryTable, AlarmsTable, Db } from '../../db/schema.ts'
import { inMultiRowStatements } from '../../db/multi-row.ts'
import { numberArrayBytes, textArrayBytes, withBinaryArrays, type BinaryArrays } from '../../db/pg-arrays.ts'
import { isPostgres } from '../../db/row-level-security.ts'
import { lockUntilCommit } from '../../db/transaction-lock.ts'
import type { OrgId } from '../../ids.ts'
import type { ActivationCounts, AlarmActivations, IntervalCount, PriorityCount } from './load.ts'

// Ids per `IN (…)` list of the SQLite lookups.
const CHUNK = 2000

/** A column's PostgreSQL type (of its `unnest` array) and the element its binary array is written with (db/pg-arrays.ts). */
const ELEMENTS = { text: 'text', integer: 'int4', bigint: 'int8', 'double precision': 'float8' } as const
type PgType = keyof typeof ELEMENTS

/** The columns a statement of ingestion writes, each with its PostgreSQL type. */
type Columns<T> = ReadonlyArray<readonly [keyof T & string, PgType]>

const EVENT_COLUMNS = [
  ['org_id', 'text'],
  ['site_code', 'text'],
  ['event_id', 'text'],
  ['alarm_id', 'text'],
  ['instance_id', 'text'],
  ['condition', 'text'],
  ['priority', 'text'],
  ['is_active', 'integer'],
  ['occurred_at', 'bigint'],
  ['received_at', 'bigint'],
  ['message', 'text'],
  ['value', 'double precision'],
  ['limit_value', 'double precision'],
  ['effect', 'text'],
] as const satisfies Columns<AlarmEventsTable>

const HISTORY_COLUMNS = [
  ['org_id', 'text'],
  ['site_code', 'text'],
  ['alarm_id', 'text'],
  ['seq', 'integer'],
  ['at', 'bigint'],
  ['action', 'text'],
  ['from_state', 'text'],
  ['to_state', 'text'],
  ['actor_kind', 'text'],
  ['actor_id', 'text'],
  ['comment', 'text'],
  ['event_id', 'text'],
] as const satisfies Columns<AlarmHistoryTable>

/** What ingestion changes on an alarm it read. */
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
] as const satisfies Columns<AlarmsTable>

const ALARM_COLUMNS = [
  ['org_id', 'text'],
  ['site_code', 'text'],
  ['id', 'text'],
  ['instance_id', 'text'],
  ['condition', 'text'],
  ['is_out_of_service', 'integer'],
  ['raised_at', 'bigint'],
  ['created_at', 'bigint'],
  ...INGEST_COLUMNS,
] as const satisfies Columns<AlarmsTable>

/** Compile-time: the inserts write every column of their table (one added to the table and not here fails to compile). */
type Writes<T, C extends Columns<T>> = Exclude<keyof T, C[number][0]> extends never ? true : never
const everyColumnWritten: [
  Writes<AlarmEventsTable, typeof EVENT_COLUMNS>,
  Writes<AlarmHistoryTable, typeof HISTORY_COLUMNS>,
  Writes<AlarmsTable, typeof ALARM_COLUMNS>,
] = [true, true, true]
void everyColumnWritten

/** `$from::type[], …` (PostgreSQL): one array parameter a column. */
const unnestArrays = <T>(columns: Columns<T>, from: number) => columns.map(([, type], i) => `$${from + i}::${type}[]`).join(', ')
const names = <T>(columns: Columns<T>) => columns.map(([c]) => `"${c}"`).join(', ')
/**
 * The column arrays of `rows` (PostgreSQL `unnest`), binary, in `arrays` (valid until their statement has answered):
 * pg's text form of JS arrays was most of what a batch allocated, and made it outlive young collections (issue 29).
 * `value` answers a row's value of a column.
 */
function arraysOf<R>(
  arrays: BinaryArrays,
  columns: ReadonlyArray<readonly [string, PgType]>,
  rows: readonly R[],
  value: (row: R, column: string) => unknown,
): Buffer[] {
  const n = rows.length
  const text = (c: string) => (k: number) => (value(rows[k]!, c) ?? null) as string | null
  const number = (c: string) => (k: number) => (value(rows[k]!, c) ?? null) as number | null
  arrays.start(columns.reduce((bytes, [c, type]) => bytes + (type === 'text' ? textArrayBytes(n, text(c)) : numberArrayBytes(ELEMENTS[type], n)), 0))
  return columns.map(([c, type]) => (type === 'text' ? arrays.texts(n, text(c)) : arrays.numbers(ELEMENTS[type], n, number(c))))
}
const fieldOf = <T>(row: T, column: string) => row[column as keyof T]
/**
 * SQLite: the values of `rows` one row after another (`getters`: a row's values in column order) in one array, not an
 * array a row flattened (session 19: those were a third of what a batch allocated).
 */
function flatValues<R>(rows: readonly R[], getters: ReadonlyArray<(row: R) => unknown>): unknown[] {
  const values = new Array<unknown>(rows.length * getters.length)
  let k = 0
  for (const row of rows) for (const get of getters) values[k++] = get(row)
  return values
}
/** `(?, …), …` (SQLite) for `rows` rows of `width` values. */
const placeholders = (rows: number, width: number) => new Array<string>(rows).fill(`(${new Array<string>(width).fill('?').join(', ')})`).join(', ')

/**
 * Statement text with its parameters, past Kysely's builder: for a statement of a thousand rows, building and
 * compiling the query tree costs more than the database's work (issue 29); the parameters are not frozen, as
 * CompiledQuery.raw would. `run` answers the rows changed (SQLite: not counting rows the link triggers write).
 */
const query = <Row>(db: Db, text: string, parameters: unknown[]) => db.executeQuery<Row>({ ...CompiledQuery.raw(text), parameters })
const run = async (db: Db, text: string, parameters: unknown[]): Promise<number> => Number((await query(db, text, parameters)).numAffectedRows ?? 0)

/**
 * SQLite: `rows` in multi-row statements under the parameter limit (db/multi-row.ts: power-of-two sizes, so that the
 * varying row counts of batches make at most eleven statement texts a table in SQLite's statement cache), `statement(n)`
 * the text for `n` rows. Returns the rows changed.
 */
async function inStatements<T>(rows: T[], width: number, statement: (n: number) => string, parameters: (chunk: T[]) => unknown[], db: Db): Promise<number> {
  let changed = 0
  await inMultiRowStatements(rows, width, async (chunk) => {
    changed += await run(db, statement(chunk.length), parameters(chunk))
  })
  return changed
}

/**
 * Writes `rows` into `table` in multi-row statements (`tail`: a conflict clause) and returns how many it inserted.
 * PostgreSQL: one `insert … select * from unnest(…)` whatever the count (one array a column: a short text that
 * PostgreSQL parses once, not a parameter per value); SQLite: multi-row VALUES under its parameter limit.
 */
async function insertRows<T>(db: Db, table: string, columns: Columns<T>, rows: T[], tail = ''): Promise<number> {
  if (rows.length === 0) return 0
  const head = `insert into ${table} (${names(columns)})`
  if (isPostgres(db)) {
    return withBinaryArrays((arrays) => run(db, `${head} select * from unnest(${unnestArrays(columns, 1)}) ${tail}`, arraysOf(arrays, columns, rows, fieldOf)))
  }
  const getters = columns.map(
    ([c]) =>
      (row: T) =>
        row[c],
  )
  return inStatements(
    rows,
    columns.length,
    (n) => `${head} values ${placeholders(n, columns.length)} ${tail}`,
    (chunk) => flatValues(chunk, getters),
    db,
  )
}

export const insertAlarmEvents = (db: Db, rows: AlarmEventsTable[]) => insertRows(db, 'alarm_events', EVENT_COLUMNS, rows)
export const insertAlarmHistory = (db: Db, rows: AlarmHistoryTable[]) => insertRows(db, 'alarm_history', HISTORY_COLUMNS, rows)

/**
 * Raises new alarms in multi-row statements. A row whose tag already has an open alarm (the unique index on
 * `active_key`: a concurrent batch won the race) is skipped, not an error, so the transaction stays usable on
 * PostgreSQL; returns how many were inserted and the caller retries when that is fewer than it asked for.
 */
export const insertNewAlarms = (db: Db, rows: AlarmsTable[]) => insertRows(db, 'alarms', ALARM_COLUMNS, rows, 'on conflict do nothing')

export interface VersionedAlarmWrite {
  row: OpenAlarm
  /** The version the row had when it was read: the write applies only if it still has it. */
  readVersion: number
}

/**
 * The set-based form of `updateAlarmIfVersion` for ingestion: one statement writes every alarm of the batch (SQLite:
 * one per chunk under the parameter limit), each only where its version is still the one read. Returns how many rows
 * were written; fewer than asked means another writer got there first (the caller retries the transaction).
 * PostgreSQL: `update … from unnest(…)` (an array a column); SQLite: `with v as (values …) update … from v` (≥ 3.33).
 */
export async function updateAlarmsIfVersion(db: Db, orgId: OrgId, siteCode: string, writes: VersionedAlarmWrite[]): Promise<number> {
  if (writes.length === 0) return 0
  const set = INGEST_COLUMNS.map(([c]) => `"${c}" = v."${c}"`).join(', ')
  const match = 'alarms.id = v.id and alarms.version = v.read_version'
  if (isPostgres(db)) {
    const columns = [['id', 'text'], ['read_version', 'integer'], ...INGEST_COLUMNS] as const
    return withBinaryArrays((arrays) =>
      run(
        db,
        `update alarms set ${set} from unnest(${unnestArrays(columns, 3)}) as v(${names(columns)})
          where alarms.org_id = $1 and alarms.site_code = $2 and ${match}`,
        [orgId, siteCode, ...arraysOf(arrays, columns, writes, (w, c) => (c === 'read_version' ? w.readVersion : fieldOf(w.row, c)))],
      ),
    )
  }
  // SQLite: the site in every row, so that the only way into `alarms` is its primary key from each row of `v` (with
  // the site as constants, SQLite's planner walks every alarm of the site and searches `v` for each).
  const getters: Array<(w: VersionedAlarmWrite) => unknown> = [
    () => orgId,
    () => siteCode,
    (w) => w.row.id,
    (w) => w.readVersion,
    ...INGEST_COLUMNS.map(
      ([c]) =>
        (w: VersionedAlarmWrite) =>
          w.row[c],
    ),
  ]
  const width = getters.length
  return inStatements(
    writes,
    width,
    (n) =>
      `with v(org_id, site_code, id, read_version, ${names(INGEST_COLUMNS)}) as (values ${placeholders(n, width)})
        update alarms set ${set} from v where alarms.org_id = v.org_id and alarms.site_code = v.site_code and ${match}`,
    (chunk) => flatValues(chunk, getters),
    db,
  )
}

/**
 * Serialises the alarm writers of one site (ingestion, operator actions, shelve expiry) until the transaction ends,
 * so that a concurrent writer (in any process of a cell) waits for the one ahead instead of failing its version
 * check; a batch then reads the committed result of the one before it.
 */
export function lockSiteAlarms(db: Db, dialect: Dialect, orgId: OrgId, siteCode: string): Promise<void> {
  return lockUntilCommit(db, dialect, `alarms ${orgId} ${siteCode}`)
}

/**
 * Rows of the site's `table` whose `column` is one of `values`, past Kysely's builder like the writes above.
 * PostgreSQL: `= any($3::text[])`, one statement; SQLite: `in (?, …)` lists of CHUNK.
 */
async function selectIn<Row>(db: Db, columns: string, table: string, orgId: OrgId, siteCode: string, column: string, values: string[]): Promise<Row[]> {
  const head = (org: string, site: string) => `select ${columns} from ${table} where org_id = ${org} and site_code = ${site} and ${column}`
  if (isPostgres(db)) {
    if (values.length === 0) return []
    return withBinaryArrays(async (arrays) => {
      const [list] = arraysOf(arrays, [['value', 'text']], values, (v) => v)
      return (await query<Row>(db, `${head('$1', '$2')} = any($3::text[])`, [orgId, siteCode, list])).rows
    })
  }
  const out: Row[] = []
  for (let i = 0; i < values.length; i += CHUNK) {
    const chunk = values.slice(i, i + CHUNK)
    const text = `${head('?', '?')} in (${new Array<string>(chunk.length).fill('?').join(', ')})`
    out.push(...(await query<Row>(db, text, [orgId, siteCode, ...chunk])).rows)
  }
  return out
}

/** Event ids already stored for the site, each with the alarm it applied to. */
export async function findKnownEventIds(db: Db, orgId: OrgId, siteCode: string, eventIds: string[]): Promise<Map<string, string | null>> {
  const rows = await selectIn<Pick<AlarmEventsTable, 'event_id' | 'alarm_id'>>(db, 'event_id, alarm_id', 'alarm_events', orgId, siteCode, 'event_id', eventIds)
  return new Map(rows.map((r) => [r.event_id, r.alarm_id]))
}

/** What ingestion reads of an open alarm: what it writes back (INGEST_COLUMNS), the id, and the out-of-service flag. */
export type OpenAlarm = Pick<AlarmsTable, 'id' | 'is_out_of_service' | (typeof INGEST_COLUMNS)[number][0]>
const OPEN_ALARM_COLUMNS = names<OpenAlarm>([['id', 'text'], ['is_out_of_service', 'integer'], ...INGEST_COLUMNS])

/**
 * The open alarms of the site's tags `activeKeys`: only the columns ingestion uses (15 of 21). A batch reads up to a
 * thousand of these rows, alive while it runs; read whole (`select *`) they were most of what a SQLite batch promoted
 * to V8's old generation, and this read alone took ingestion's peak RSS at 100 000 events from +61–75 to +40–42 MiB
 * (issue 29, session 20, docs/benchmarks.md).
 */
export const findOpenAlarms = (db: Db, orgId: OrgId, siteCode: string, activeKeys: string[]) =>
  selectIn<OpenAlarm>(db, OPEN_ALARM_COLUMNS, 'alarms', orgId, siteCode, 'active_key', activeKeys)

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

/** An alarm's transitions: oldest first after `afterSeq`, or (`latest`) newest first; at most `limit`. */
export function listAlarmHistory(db: Db, orgId: OrgId, siteCode: string, alarmId: string, page: { limit: number; afterSeq?: number; latest?: boolean }) {
  let query = db.selectFrom('alarm_history').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode).where('alarm_id', '=', alarmId)
  if (page.afterSeq !== undefined) query = query.where('seq', '>', page.afterSeq)
  return query
    .orderBy('seq', page.latest ? 'desc' : 'asc')
    .limit(page.limit)
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

/** A row of countActivations' statement: an interval's (its index set), an effect and priority's, or an alarm's (its instance set). */
interface ActivationCountRow {
  interval_index: number | string | null
  effect: string | null
  priority: string | null
  instance_id: string | null
  condition: string | null
  activations: number | string
  max_in_window: number | string | null
}

/**
 * The activations (annunciated or suppressed) of [from, to) counted in the database, in one statement (one snapshot):
 * the annunciated ones per interval of `intervalMs` from `from`, all per effect and priority, and per alarm its
 * annunciated activations and the most of them within any `windowMs` (a window over the alarm's activations in time
 * order). Its rows grow with the intervals and the alarms, never with the activations: a month of floods is not read.
 */
export async function countActivations(
  db: Db,
  orgId: OrgId,
  siteCode: string,
  period: { from: number; to: number; intervalMs: number; windowMs: number },
): Promise<ActivationCounts> {
  const { from, to, intervalMs, windowMs } = period
  // Times are whole milliseconds: "within windowMs of an activation" is the range [t, t + windowMs - 1].
  const { rows } = await sql<ActivationCountRow>`with activations as (
      select instance_id, condition, priority, effect, occurred_at
      from alarm_events
      where org_id = ${orgId} and site_code = ${siteCode} and occurred_at >= ${from} and occurred_at < ${to} and effect in ('activated', 'suppressed')
    )
    select interval_index, null as effect, null as priority, null as instance_id, null as condition, count(*) as activations, cast(null as bigint) as max_in_window
    from (
      select (occurred_at - cast(${from} as bigint)) / cast(${intervalMs} as bigint) as interval_index from activations where effect = 'activated'
    ) as annunciated
    group by interval_index
    union all
    select null, effect, priority, null, null, count(*), null from activations group by effect, priority
    union all
    select null, null, null, instance_id, condition, count(*), max(in_window)
    from (
      select instance_id, condition,
        count(*) over (partition by instance_id, condition order by occurred_at range between current row and ${sql.lit(windowMs - 1)} following) as in_window
      from activations where effect = 'activated'
    ) as alarm_activations
    group by instance_id, condition`.execute(db)
  const counts: { intervals: IntervalCount[]; priorities: PriorityCount[]; alarms: AlarmActivations[] } = { intervals: [], priorities: [], alarms: [] }
  for (const r of rows) {
    if (r.interval_index !== null) counts.intervals.push({ interval: Number(r.interval_index), activations: Number(r.activations) })
    else if (r.instance_id === null) counts.priorities.push({ effect: r.effect!, priority: r.priority!, activations: Number(r.activations) })
    else counts.alarms.push({ instanceId: r.instance_id, condition: r.condition!, activations: Number(r.activations), maxInWindow: Number(r.max_in_window) })
  }
  return counts
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
