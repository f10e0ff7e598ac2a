import { sql } from 'kysely'
import type { Dialect } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'

// The queries of the tenant package's historian_samples part (historian/transfer.ts): samples read and written as
// one row each, over historian_series + historian_points.

export interface SeriesRow {
  id: number
  site_code: string
  instance_id: string
  tag_key: string
}
export interface PointRow {
  series_id: unknown
  ts: unknown
  value: unknown
  text: unknown
  quality: unknown
  batch_id: unknown
}
export interface PointKey {
  seriesId: number
  ts: unknown
}
export interface NewPoint {
  seriesId: number
  ts: unknown
  value: unknown
  text: unknown
  quality: unknown
  batchId: unknown
}

const POINT_COLUMNS = sql`series_id, ts, value, text, quality, batch_id`

/**
 * The organisation's (or one site's) series in the package's order: by (site_code, instance_id, tag_key) in byte
 * order (the "C" collation on PostgreSQL, as SQLite's binary).
 */
export async function listSeriesInByteOrder(db: Db, dialect: Dialect, orgId: string, siteCode: string | null): Promise<SeriesRow[]> {
  const c = dialect === 'postgres' ? sql` collate "C"` : sql``
  const site = siteCode === null ? sql`` : sql` and site_code = ${siteCode}`
  const { rows } = await sql<SeriesRow>`select id, site_code, instance_id, tag_key from historian_series
    where org_id = ${orgId}${site} order by site_code${c}, instance_id${c}, tag_key${c}`.execute(db)
  return rows.map((s) => ({ ...s, id: Number(s.id) }))
}

/** The organisation's sample count of each series that has samples. */
export async function countPointsBySeries(db: Db, orgId: string): Promise<Map<number, number>> {
  const { rows } = await sql<{ series_id: unknown; n: unknown }>`select series_id, count(*) as n from historian_points
    where org_id = ${orgId} group by series_id`.execute(db)
  return new Map(rows.map((r) => [Number(r.series_id), Number(r.n)]))
}

/** Every sample of these series, by series then time. */
export async function listPointsOfSeries(db: Db, orgId: string, seriesIds: number[]): Promise<PointRow[]> {
  const { rows } = await sql<PointRow>`select ${POINT_COLUMNS} from historian_points
    where org_id = ${orgId} and series_id in (${sql.join(seriesIds)}) order by series_id, ts`.execute(db)
  return rows
}

/** A keyset page of one series' samples by time, after `after` (from the first when undefined). */
export async function listPointsPage(db: Db, orgId: string, seriesId: number, after: number | undefined, limit: number): Promise<PointRow[]> {
  const cursor = after === undefined ? sql`` : sql` and ts > ${after}`
  const { rows } = await sql<PointRow>`select ${POINT_COLUMNS} from historian_points
    where org_id = ${orgId} and series_id = ${seriesId}${cursor} order by ts limit ${limit}`.execute(db)
  return rows
}

export async function hasAnySample(db: Db, orgId: string): Promise<boolean> {
  const { rows } = await sql`select 1 from historian_series s join historian_points p on p.org_id = s.org_id and p.series_id = s.id
    where s.org_id = ${orgId} limit 1`.execute(db)
  return rows.length > 0
}

/** The series of a site's instances. */
export async function listSeriesOfInstances(db: Db, orgId: string, siteCode: string, instanceIds: string[]): Promise<SeriesRow[]> {
  const found = await db
    .selectFrom('historian_series')
    .select(['id', 'site_code', 'instance_id', 'tag_key'])
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('instance_id', 'in', instanceIds)
    .execute()
  return found.map((s) => ({ ...s, id: Number(s.id) }))
}

/** The stored samples at these (series, time) keys. */
export async function findPoints(db: Db, orgId: string, keys: PointKey[]): Promise<PointRow[]> {
  const list = keys.map((k) => sql`(cast(${k.seriesId} as integer), cast(${k.ts} as bigint))`)
  const { rows } = await sql<PointRow>`
    select ${POINT_COLUMNS} from historian_points
    where org_id = ${orgId} and (series_id, ts) in (values ${sql.join(list)})`.execute(db)
  return rows
}

/** Inserts the samples in one statement, replacing those at the same series and time. */
export async function upsertPoints(db: Db, orgId: string, points: NewPoint[]): Promise<void> {
  const values = sql.join(points.map((p) => sql`(${orgId}, ${p.seriesId}, ${p.ts}, ${p.value ?? null}, ${p.text ?? null}, ${p.quality}, ${p.batchId})`))
  await sql`insert into historian_points (org_id, series_id, ts, value, text, quality, batch_id) values ${values}
    on conflict (org_id, series_id, ts)
    do update set value = excluded.value, text = excluded.text, quality = excluded.quality, batch_id = excluded.batch_id`.execute(db)
}

// The fleet link's upload of one batch's samples (historian/link.ts): the batch's series and time ranges from its
// recorded coverage, then keyset pages of each series' samples of that batch. historian_points has no batch index
// (migration 1900): a batch's samples are found through the primary key over its ranges, filtered by batch_id.

export interface BatchForLink {
  site_code: string
  status: string
  /** JSON: the batch's coverage, [{ instanceId, tagKey, firstTs, lastTs, … }] (historian/service/batch-record.ts) */
  tags: string
}

export function findBatchForLink(db: Db, orgId: string, batchId: string): Promise<BatchForLink | undefined> {
  return db.selectFrom('historian_batches').select(['site_code', 'status', 'tags']).where('org_id', '=', orgId).where('id', '=', batchId).executeTakeFirst()
}

/** The site's series among these (instance, tag) pairs. */
export async function listSeriesOfPairs(db: Db, orgId: string, siteCode: string, pairs: Array<{ instanceId: string; tagKey: string }>): Promise<SeriesRow[]> {
  const out: SeriesRow[] = []
  for (let start = 0; start < pairs.length; start += 500) {
    const chunk = pairs.slice(start, start + 500)
    const found = await db
      .selectFrom('historian_series')
      .select(['id', 'site_code', 'instance_id', 'tag_key'])
      .where('org_id', '=', orgId)
      .where('site_code', '=', siteCode)
      .where('instance_id', 'in', [...new Set(chunk.map((p) => p.instanceId))])
      .where('tag_key', 'in', [...new Set(chunk.map((p) => p.tagKey))])
      .execute()
    out.push(...found.map((s) => ({ ...s, id: Number(s.id) })))
  }
  return out
}

export interface SeriesSpan {
  seriesId: number
  /** Inclusive bounds of the batch's samples in this series. */
  from: number
  to: number
}

const SPANS_PER_STATEMENT = 100

/** How many samples of the batch each of these series holds within its span (series without any are absent). */
export async function countBatchPointsBySeries(db: Db, orgId: string, batchId: string, spans: SeriesSpan[]): Promise<Map<number, number>> {
  const out = new Map<number, number>()
  for (let start = 0; start < spans.length; start += SPANS_PER_STATEMENT) {
    const within = sql.join(
      spans.slice(start, start + SPANS_PER_STATEMENT).map((s) => sql`(series_id = ${s.seriesId} and ts >= ${s.from} and ts <= ${s.to})`),
      sql` or `,
    )
    const { rows } = await sql<{ series_id: unknown; n: unknown }>`select series_id, count(*) as n from historian_points
      where org_id = ${orgId} and batch_id = ${batchId} and (${within}) group by series_id`.execute(db)
    for (const r of rows) out.set(Number(r.series_id), Number(r.n))
  }
  return out
}

/** A keyset page of the batch's samples in one series by time: from `fromTs` (inclusive) or after `afterTs`. */
export async function listBatchPointsPage(
  db: Db,
  orgId: string,
  batchId: string,
  span: SeriesSpan,
  cursor: { afterTs?: number; fromTs?: number },
  limit: number,
): Promise<PointRow[]> {
  const lower = cursor.afterTs !== undefined ? sql`ts > ${cursor.afterTs}` : sql`ts >= ${cursor.fromTs ?? span.from}`
  const { rows } = await sql<PointRow>`select ${POINT_COLUMNS} from historian_points
    where org_id = ${orgId} and series_id = ${span.seriesId} and ${lower} and ts <= ${span.to} and batch_id = ${batchId}
    order by ts limit ${limit}`.execute(db)
  return rows
}

/** The time of the batch's `offset`-th sample (from 0) in one series, by time; undefined past its last. */
export async function batchPointTsAt(db: Db, orgId: string, batchId: string, span: SeriesSpan, offset: number): Promise<number | undefined> {
  const { rows } = await sql<{ ts: unknown }>`select ts from historian_points
    where org_id = ${orgId} and series_id = ${span.seriesId} and ts >= ${span.from} and ts <= ${span.to} and batch_id = ${batchId}
    order by ts limit 1 offset ${offset}`.execute(db)
  return rows[0] === undefined ? undefined : Number(rows[0].ts)
}
