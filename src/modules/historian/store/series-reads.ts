import { sql, type RawBuilder } from 'kysely'
import type { Db } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'

/**
 * The historian's retrieval modes (issue 30) over one series, each one statement computed in the database with the
 * same SQL on both dialects. The signal a series describes: its visible numeric samples (complete batches; bad
 * quality, under 64, left out unless `includeBad`), joined linearly or held until the next sample (`step`), the last
 * value held after the last sample, nothing before the first.
 */
export interface SignalKey {
  orgId: OrgId
  seriesId: number
  includeBad: boolean
  isStep: boolean
}

/** The series id of an instance's tag in a site, or undefined (no sample was ever stored for it). */
export async function findSeriesId(db: Db, orgId: OrgId, siteCode: string, instanceId: string, tagKey: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('historian_series')
    .select('id')
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('instance_id', '=', instanceId)
    .where('tag_key', '=', tagKey)
    .executeTakeFirst()
  return row === undefined ? undefined : Number(row.id)
}

/** Joined to `historian_points p`: the sample's batch, visible (complete, or open to a gateway's pushes; others are not). */
const completeBatch = sql`join historian_batches b on b.org_id = p.org_id and b.id = p.batch_id and b.status in ('complete', 'open')`

/** Of `historian_points p`: a numeric sample, of good or uncertain quality unless bad ones are asked for. */
const usable = (key: SignalKey) => sql`p.value is not null${key.includeBad ? sql`` : sql` and p.quality >= 64`}`

/** `from … where …` of the series' visible numeric samples, alias `p`, for a statement to add its own terms to. */
function visibleSamples(key: SignalKey) {
  return sql`from historian_points p ${completeBatch} where p.org_id = ${key.orgId} and p.series_id = ${key.seriesId} and ${usable(key)}`
}

/**
 * The statement of `rawSamples` (exported for the read bench): a page of the series' samples of complete (or open) batches,
 * every quality and text states included, oldest first, keyset-paged by timestamp: one primary-key range read in key
 * order that stops at the page's end, on both databases. By series id (joined to historian_series by its key instead,
 * PostgreSQL planned a parallel scan of the whole table and a sort), and the batch checked by a scalar subquery, a
 * lookup a sample that is never turned into a join (joined to historian_batches, PostgreSQL, which has no statistics
 * of that small table, believed few samples pass and chose the same scan and sort: 0.7 s for a page over 2 M samples,
 * against ~35 ms).
 */
export function rawSamplesQuery(orgId: OrgId, seriesId: number, from: number, to: number, page: { limit: number; after?: number }) {
  return sql<{ ts: number; value: number | null; text: string | null; quality: number; batch_id: string }>`
    select p.ts, p.value, p.text, p.quality, p.batch_id from historian_points p
    where p.org_id = ${orgId} and p.series_id = ${seriesId} and p.ts >= ${from} and p.ts < ${to}${page.after === undefined ? sql`` : sql` and p.ts > ${page.after}`}
      and (select b.status from historian_batches b where b.org_id = p.org_id and b.id = p.batch_id) in ('complete', 'open')
    order by p.ts limit ${page.limit + 1}`
}

/** A page of raw samples and one more (its presence says a next page exists). */
export async function rawSamples(db: Db, orgId: OrgId, seriesId: number, from: number, to: number, page: { limit: number; after?: number }) {
  return (await rawSamplesQuery(orgId, seriesId, from, to, page).execute(db)).rows
}

/**
 * `near(k, t, t0, t1, v0, v1)` for the rows of `times(k, t)`: the visible samples at or before and at or after each
 * time, each one backward or forward primary-key search that stops at the first visible sample, and their values;
 * then `valued(k, t, v)`, the signal at each time. Correlated scalar subqueries throughout: each is one primary-key
 * lookup a time whatever the planner believes of the tables (a left join to the samples for the values was planned,
 * on PostgreSQL without statistics, as a read of the whole series filtered per time). Materialized, so that each is
 * run once.
 */
function signalAtTimes(key: SignalKey) {
  const valueAt = (t: RawBuilder<unknown>) =>
    sql`(select q.value from historian_points q where q.org_id = ${key.orgId} and q.series_id = ${key.seriesId} and q.ts = ${t})`
  const interpolated = key.isStep ? sql`v0` : sql`v0 + (v1 - v0) * (t - t0) / (t1 - t0)`
  return sql`near (k, t, t0, t1) as materialized (
      select x.k, x.t,
        (select p.ts ${visibleSamples(key)} and p.ts <= x.t order by p.ts desc limit 1),
        (select p.ts ${visibleSamples(key)} and p.ts >= x.t order by p.ts limit 1)
      from times x
    ), ends (k, t, t0, t1, v0, v1) as materialized (
      select n.k, n.t, n.t0, n.t1, ${valueAt(sql`n.t0`)}, ${valueAt(sql`n.t1`)} from near n
    ), valued (k, t, v) as (
      select k, t, case when t0 is null then null when t1 is null or t1 = t0 then v0 else ${interpolated} end from ends
    )`
}

function timesTable(times: readonly number[]): RawBuilder<unknown> {
  return sql`times (k, t) as (values ${sql.join(times.map((t, k) => sql`(cast(${k} as integer), cast(${t} as bigint))`))})`
}

/** The statement of `signalAt` (exported for the read bench, which runs it through the driver alone). */
export function signalAtQuery(key: SignalKey, times: readonly number[]) {
  return sql<{ k: number; v: number | null }>`with ${timesTable(times)}, ${signalAtTimes(key)}
    select k, v from valued order by k`
}

/** The signal at each of `times` (null before the first visible sample), in their order. */
export async function signalAt(db: Db, key: SignalKey, times: readonly number[]): Promise<Array<number | null>> {
  if (times.length === 0) return []
  const { rows } = await signalAtQuery(key, times).execute(db)
  return rows.map((r) => (r.v === null ? null : Number(r.v)))
}

/** A bucket of an aggregate read: its start, and the part of it inside [from, to), [a, z). */
export interface BucketWindow {
  start: number
  a: number
  z: number
}

/**
 * The statement of `timeWeightedAverages` over the consecutive non-empty buckets of one page (width `bucketMs`):
 * per bucket start `s`, the integral of the signal (trapezoids, or rectangles for a step tag) over the part of
 * [a, z) after the first visible sample, divided by that part's length. The pieces are each bucket's edges (the
 * signal there, k = 0 and 1) and the samples strictly inside, read in one primary-key range over the page and
 * given their bucket by arithmetic (no join: a join of the samples to the bucket list was planned as a scan of the
 * list per sample).
 */
export function timeWeightedAveragesQuery(key: SignalKey, bucketMs: number, from: number, windows: readonly BucketWindow[]) {
  const edges = sql.join(windows.flatMap((w) => [sql`(cast(${w.start} as bigint), cast(${w.a} as bigint))`, sql`(${w.start}, ${w.z})`]))
  const first = Math.min(...windows.map((w) => w.a))
  const last = Math.max(...windows.map((w) => w.z))
  const area = key.isStep ? sql`(ts - pt) * pv` : sql`(ts - pt) * (pv + v) / 2`
  const offset = sql`(((p.ts % ${bucketMs}) + ${bucketMs}) % ${bucketMs})`
  return sql<{ s: number; twa: number | null }>`with times (k, t) as (values ${edges}),
    ${signalAtTimes(key)},
    pts (s, ts, v) as (
      select k, t, v from valued
      union all
      select p.ts - ${offset}, p.ts, p.value ${visibleSamples(key)}
        and p.ts > ${first} and p.ts < ${last} and p.ts > ${from} and ${offset} <> 0
    ),
    pieces as (
      select s, ts, v, lag(ts) over (partition by s order by ts) as pt, lag(v) over (partition by s order by ts) as pv from pts
    )
    select s, sum(${area}) / nullif(cast(sum(ts - pt) as double precision), 0) as twa from pieces where pv is not null group by s`
}

/** The time-weighted average of each bucket of a page, in their order; null where the signal is nowhere defined. */
export async function timeWeightedAverages(
  db: Db,
  key: SignalKey,
  bucketMs: number,
  from: number,
  windows: readonly BucketWindow[],
): Promise<Array<number | null>> {
  if (windows.length === 0) return []
  const result = await timeWeightedAveragesQuery(key, bucketMs, from, windows).execute(db)
  const byStart = new Map(result.rows.map((r) => [Number(r.s), r.twa === null ? null : Number(r.twa)]))
  return windows.map((w) => byStart.get(w.start) ?? null)
}

/**
 * Plot values: the window [from, to) cut into columns of `columnMs`; in each, the first, last, lowest and highest
 * visible sample (the earliest of equal values), each once, oldest first: at most 4 a column, the shape kept.
 */
export async function plotValues(db: Db, key: SignalKey, from: number, to: number, columnMs: number): Promise<Array<{ ts: number; value: number }>> {
  const { rows } = await sql<{ ts: number; value: number }>`with visible as materialized (
      select p.ts, p.value, (p.ts - cast(${from} as bigint)) / cast(${columnMs} as bigint) as col ${visibleSamples(key)} and p.ts >= ${from} and p.ts < ${to}
    ), ranked as (
      select ts, value,
        row_number() over (partition by col order by ts) as rf,
        row_number() over (partition by col order by ts desc) as rl,
        row_number() over (partition by col order by value, ts) as rmin,
        row_number() over (partition by col order by value desc, ts) as rmax
      from visible
    )
    select ts, value from ranked where rf = 1 or rl = 1 or rmin = 1 or rmax = 1 order by ts`.execute(db)
  return rows.map((r) => ({ ts: Number(r.ts), value: Number(r.value) }))
}
