import { sql } from 'kysely'
import type { Dialect } from '../../../db/connect.ts'
import { isPostgres } from '../../../db/row-level-security.ts'
import type { Db, HistorianBatchesTable } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'

export async function insertBatch(db: Db, row: HistorianBatchesTable): Promise<void> {
  await db.insertInto('historian_batches').values(row).execute()
}

export async function updateBatch(db: Db, orgId: OrgId, id: string, changes: Partial<HistorianBatchesTable>): Promise<void> {
  await db.updateTable('historian_batches').set(changes).where('org_id', '=', orgId).where('id', '=', id).execute()
}

export function findBatch(db: Db, orgId: OrgId, id: string): Promise<HistorianBatchesTable | undefined> {
  return db.selectFrom('historian_batches').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}

/**
 * A listed batch: the columns its summary shows. The per-tag coverage, which grows with the file's tags, is counted by
 * the database instead of read.
 */
export type ListedBatchRow = Omit<HistorianBatchesTable, 'tags' | 'options'> & { tag_count: number }

export function listBatchesOfSite(
  db: Db,
  dialect: Dialect,
  orgId: OrgId,
  siteCode: string,
  page: { limit: number; before?: string },
): Promise<ListedBatchRow[]> {
  const tagCount = dialect === 'postgres' ? sql<number>`json_array_length(tags::json)` : sql<number>`json_array_length(tags)`
  let query = db
    .selectFrom('historian_batches')
    .select([
      'org_id',
      'site_code',
      'id',
      'format',
      'status',
      'rows_read',
      'samples_stored',
      'rejected_count',
      'collision_count',
      'replaced_count',
      'bytes_read',
      'bytes_total',
      'first_ts',
      'last_ts',
      'report',
      'trend_sha256',
      'mapping_sha256',
      'trend_name',
      'is_forced',
      'error',
      'created_by',
      'created_at',
      'updated_at',
      'completed_at',
      tagCount.as('tag_count'),
    ])
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
  if (page.before !== undefined) query = query.where('id', '<', page.before)
  return query
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute()
}

/** The earlier complete batch of the same pair of files in the site, if any. */
export function findCompleteTwin(
  db: Db,
  orgId: OrgId,
  siteCode: string,
  trendSha: string,
  mappingSha: string,
  exceptId: string,
): Promise<{ id: string } | undefined> {
  return db
    .selectFrom('historian_batches')
    .select('id')
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('trend_sha256', '=', trendSha)
    .where('mapping_sha256', '=', mappingSha)
    .where('status', '=', 'complete')
    .where('id', '<>', exceptId)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst()
}

/**
 * The series ids of (instance, tag) pairs of a site, created when missing: once per series per write transaction
 * that first meets it, never per sample. Same statements on both dialects (the id is an identity column on
 * PostgreSQL and SQLite's integer primary key).
 */
export async function ensureSeries(db: Db, orgId: OrgId, siteCode: string, pairs: Array<{ instanceId: string; tagKey: string }>): Promise<Map<string, number>> {
  const ids = new Map<string, number>()
  for (let start = 0; start < pairs.length; start += 500) {
    const chunk = pairs.slice(start, start + 500)
    // Looked up first: the series of a site are usually all there (a live push every second), and then one read is all.
    await findSeriesIds(db, orgId, siteCode, chunk, ids)
    const missing = chunk.filter((p) => !ids.has(seriesKey(p.instanceId, p.tagKey)))
    if (missing.length === 0) continue
    const rows = sql.join(missing.map((p) => sql`(${orgId}, ${siteCode}, ${p.instanceId}, ${p.tagKey})`))
    await sql`insert into historian_series (org_id, site_code, instance_id, tag_key) values ${rows}
      on conflict (org_id, site_code, instance_id, tag_key) do nothing`.execute(db)
    await findSeriesIds(db, orgId, siteCode, missing, ids)
  }
  return ids
}

async function findSeriesIds(
  db: Db,
  orgId: OrgId,
  siteCode: string,
  pairs: Array<{ instanceId: string; tagKey: string }>,
  ids: Map<string, number>,
): Promise<void> {
  // SQLite searches the pairs themselves, one key search each: `instance_id in (…) and tag_key in (…)` had it search
  // every instance with every tag key (100 tags over 10 instances: 1 000 searches for 100 rows, most of a push's
  // lookup). PostgreSQL's index scan takes the two lists as arrays and searches only where they can match (EXPLAIN, a
  // site of 2 000 series: 11 index searches), where it plans a VALUES list of pairs as a hash join over every series
  // of the site.
  const found = isPostgres(db)
    ? await db
        .selectFrom('historian_series')
        .select(['id', 'instance_id', 'tag_key'])
        .where('org_id', '=', orgId)
        .where('site_code', '=', siteCode)
        .where('instance_id', 'in', [...new Set(pairs.map((p) => p.instanceId))])
        .where('tag_key', 'in', [...new Set(pairs.map((p) => p.tagKey))])
        .execute()
    : (
        await sql<{ id: number; instance_id: string; tag_key: string }>`select id, instance_id, tag_key from historian_series
          where org_id = ${orgId} and site_code = ${siteCode}
          and (instance_id, tag_key) in (values ${sql.join(pairs.map((p) => sql`(${p.instanceId}, ${p.tagKey})`))})`.execute(db)
      ).rows
  for (const r of found) ids.set(seriesKey(r.instance_id, r.tag_key), Number(r.id))
}

export const seriesKey = (instanceId: string, tagKey: string) => `${instanceId}\u0000${tagKey}`

/** Series ranges a statement takes: 3 parameters a range in `rangesTable`, 1 a series in DELETE's id list. */
export const RANGES_PER_STATEMENT = 5000

/**
 * `ranges` as a common table `ranges(series_id, first_ts, last_ts)`, to put before a statement that reads each of
 * its rows with a correlated sub-select (`inRange`): both databases run that as one primary-key range search a row.
 * (One statement a range costs PostgreSQL a round trip each; a `union all` of ranges is planned slowly and in
 * parallel there; a join may be planned as a scan of the whole table; an `or` of ranges is not searched by range on
 * SQLite.)
 */
function rangesTable(ranges: SeriesRange[]) {
  const rows = ranges.map((r) => sql`(cast(${r.seriesId} as bigint), cast(${r.from} as bigint), cast(${r.to} as bigint))`)
  return sql`with ranges (series_id, first_ts, last_ts) as (values ${sql.join(rows)})`
}

/** The rows of `table` in the org inside the current row `r` of `ranges`, for a correlated sub-select. */
const inRange = (table: 'historian_points' | 'historian_staging', orgId: OrgId) => sql`from ${sql.table(table)} p
  where p.org_id = ${orgId} and p.series_id = r.series_id and p.ts >= r.first_ts and p.ts <= r.last_ts`

/**
 * Whether any stored sample (of any batch, this one included) lies in one of these series' time ranges: when none
 * does, a write cannot meet an existing row and may be a plain INSERT instead of an upsert.
 */
export async function anySampleInRanges(db: Db, table: 'historian_points' | 'historian_staging', orgId: OrgId, ranges: SeriesRange[]): Promise<boolean> {
  for (let start = 0; start < ranges.length; start += RANGES_PER_STATEMENT) {
    const { rows } = await sql`${rangesTable(ranges.slice(start, start + RANGES_PER_STATEMENT))}
      select 1 as hit from ranges r where (select 1 ${inRange(table, orgId)} limit 1) is not null limit 1`.execute(db)
    if (rows.length > 0) return true
  }
  return false
}

/** Where a batch recorded samples: per (instance, tag), the earliest and latest timestamp (historian_batches.tags). */
export interface BatchCoverage {
  instanceId: string
  tagKey: string
  firstTs: number | null
  lastTs: number | null
}

/**
 * The series ids and time ranges a batch's samples lie in, from its recorded coverage (several historian tags may
 * map to one series: their ranges are joined). historian_points has no batch index (migration 1900): a batch's
 * samples are found by the primary key over these ranges, filtered by batch_id. `null` when nothing is recorded
 * (the caller then scans the site's series).
 */
export async function batchRanges(db: Db, orgId: OrgId, siteCode: string, coverage: BatchCoverage[]): Promise<SeriesRange[] | null> {
  const wanted = coverage.filter((c) => c.firstTs !== null && c.lastTs !== null)
  if (wanted.length === 0) return null
  const ranges = new Map<number, SeriesRange>()
  for (let start = 0; start < wanted.length; start += 500) {
    const chunk = wanted.slice(start, start + 500)
    const found = await db
      .selectFrom('historian_series')
      .select(['id', 'instance_id', 'tag_key'])
      .where('org_id', '=', orgId)
      .where('site_code', '=', siteCode)
      .where('instance_id', 'in', [...new Set(chunk.map((c) => c.instanceId))])
      .where('tag_key', 'in', [...new Set(chunk.map((c) => c.tagKey))])
      .execute()
    const ids = new Map(found.map((r) => [seriesKey(r.instance_id, r.tag_key), Number(r.id)]))
    for (const c of chunk) {
      const seriesId = ids.get(seriesKey(c.instanceId, c.tagKey))
      if (seriesId === undefined) continue
      const r = ranges.get(seriesId)
      if (r === undefined) ranges.set(seriesId, { seriesId, from: c.firstTs!, to: c.lastTs! })
      else {
        r.from = Math.min(r.from, c.firstTs!)
        r.to = Math.max(r.to, c.lastTs!)
      }
    }
  }
  return [...ranges.values()]
}

export interface SeriesRange {
  seriesId: number
  from: number
  to: number
}
export interface BatchWhere {
  siteCode: string
  coverage: BatchCoverage[]
}

/**
 * Deletes the batch's rows of historian_points, RANGES_PER_STATEMENT series a statement: their ids in a list and one
 * time range over all of theirs, a primary-key search a series, exact through the batch_id filter. (A DELETE cannot
 * take the count's correlated form: SQLite's DELETE joins nothing, and an EXISTS there scans the organisation's
 * points. A statement a series cost PostgreSQL a round trip each: 8.0 s for a batch of 20 000 tags.) Without
 * recorded coverage, the site's series are searched.
 */
export async function deleteSamplesOfBatch(db: Db, orgId: OrgId, batchId: string, where: BatchWhere): Promise<number> {
  const ranges = await batchRanges(db, orgId, where.siteCode, where.coverage)
  const query = db.deleteFrom('historian_points').where('org_id', '=', orgId).where('batch_id', '=', batchId)
  let deleted = 0
  if (ranges === null) {
    const siteSeries = db.selectFrom('historian_series').select('id').where('org_id', '=', orgId).where('site_code', '=', where.siteCode)
    deleted = Number((await query.where('series_id', 'in', siteSeries).executeTakeFirst()).numDeletedRows)
  } else {
    for (let start = 0; start < ranges.length; start += RANGES_PER_STATEMENT) {
      const chunk = ranges.slice(start, start + RANGES_PER_STATEMENT)
      const from = chunk.reduce((min, r) => Math.min(min, r.from), Infinity)
      const to = chunk.reduce((max, r) => Math.max(max, r.to), -Infinity)
      const result = await query
        .where(
          'series_id',
          'in',
          chunk.map((r) => r.seriesId),
        )
        .where('ts', '>=', from)
        .where('ts', '<=', to)
        .executeTakeFirst()
      deleted += Number(result.numDeletedRows)
    }
  }
  await db.deleteFrom('historian_staging').where('batch_id', '=', batchId).where('org_id', '=', orgId).execute()
  return deleted
}

/** Deletes the batch's points in one series between two times (inclusive): a primary-key range. */
export async function deleteBatchPointsIn(db: Db, orgId: OrgId, batchId: string, range: SeriesRange): Promise<number> {
  const result = await db
    .deleteFrom('historian_points')
    .where('org_id', '=', orgId)
    .where('series_id', '=', range.seriesId)
    .where('ts', '>=', range.from)
    .where('ts', '<=', range.to)
    .where('batch_id', '=', batchId)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

export async function countStoredOfBatch(db: Db, orgId: OrgId, batchId: string, where: BatchWhere): Promise<number> {
  const ranges = await batchRanges(db, orgId, where.siteCode, where.coverage)
  if (ranges === null) {
    const row = await db
      .selectFrom('historian_points')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .where('batch_id', '=', batchId)
      .where('series_id', 'in', db.selectFrom('historian_series').select('id').where('org_id', '=', orgId).where('site_code', '=', where.siteCode))
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }
  let n = 0
  for (let start = 0; start < ranges.length; start += RANGES_PER_STATEMENT) {
    const { rows } = await sql<{ n: number | string | null }>`${rangesTable(ranges.slice(start, start + RANGES_PER_STATEMENT))}
      select sum((select count(*) ${inRange('historian_points', orgId)} and p.batch_id = ${batchId})) as n from ranges r`.execute(db)
    n += Number(rows[0]?.n ?? 0)
  }
  return n
}

/** Returns how many rows it deleted: 0 when a concurrent delete removed the batch first. */
export async function deleteBatchRow(db: Db, orgId: OrgId, batchId: string): Promise<number> {
  const result = await db.deleteFrom('historian_batches').where('org_id', '=', orgId).where('id', '=', batchId).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/**
 * The batch of the stored sample at a staged sample's key (null: none), as a correlated scalar subquery. Every query
 * that meets the staged samples with the stored ones goes through it: a scalar subquery is never turned into a join,
 * so each staged sample is one primary-key lookup whatever the planner believes of the tables. As a join, PostgreSQL
 * planned with stale statistics of the staging table (a new batch id is "1 row") a nested loop scanning the whole
 * staging table once per stored sample: 50 000 samples took over 15 minutes.
 */
const storedBatchAtStagedKey = sql`(select h.batch_id from historian_points h where h.org_id = s.org_id and h.series_id = s.series_id and h.ts = s.ts)`

/** The statements that meet a forced batch's staged samples with the stored ones (exported for their plan test). */
export const stagedCollisionQueries = {
  count: (orgId: OrgId, batchId: string) => sql<{ n: number }>`
    select count(*) as n from historian_staging s
    where s.batch_id = ${batchId} and s.org_id = ${orgId} and ${storedBatchAtStagedKey} is not null`,
  replacedBatches: (orgId: OrgId, batchId: string) => sql<{ batch_id: string }>`
    select distinct x.batch_id from (
      select ${storedBatchAtStagedKey} as batch_id from historian_staging s where s.batch_id = ${batchId} and s.org_id = ${orgId}
    ) x
    where x.batch_id is not null and x.batch_id <> ${batchId}`,
  first: (orgId: OrgId, batchId: string, limit: number) => sql<{
    instance_id: string
    tag_key: string
    ts: number
    value: number | null
    text: string | null
    quality: number
    old_value: number | null
    old_text: string | null
    old_quality: number
    old_batch: string
  }>`
    select c.instance_id, c.tag_key, c.ts, c.value, c.text, c.quality, h.value as old_value, h.text as old_text, h.quality as old_quality, h.batch_id as old_batch
    from (
      select r.instance_id, r.tag_key, s.series_id, s.ts, s.value, s.text, s.quality
      from historian_staging s
      join historian_series r on r.org_id = s.org_id and r.id = s.series_id
      where s.batch_id = ${batchId} and s.org_id = ${orgId} and ${storedBatchAtStagedKey} is not null
      order by r.instance_id, r.tag_key, s.ts
      limit ${limit}
    ) c
    join historian_points h on h.org_id = ${orgId} and h.series_id = c.series_id and h.ts = c.ts
    order by c.instance_id, c.tag_key, c.ts`,
}

/** Staged samples of a forced batch that will replace a stored value (of any batch). */
export async function countStagedCollisions(db: Db, orgId: OrgId, batchId: string): Promise<number> {
  const row = await stagedCollisionQueries.count(orgId, batchId).execute(db)
  return Number(row.rows[0]?.n ?? 0)
}

/** force=true: the other batches holding a stored value the staged samples will replace (their samples will move here). */
export async function listBatchesReplacedBy(db: Db, orgId: OrgId, batchId: string): Promise<string[]> {
  const { rows } = await stagedCollisionQueries.replacedBatches(orgId, batchId).execute(db)
  return rows.map((r) => r.batch_id)
}

/** Sets the ended batches' updated_at: a change of their row (the fleet link's outbox records it). */
export async function touchBatches(db: Db, orgId: OrgId, batchIds: readonly string[], at: number): Promise<void> {
  for (let start = 0; start < batchIds.length; start += 500) {
    await db
      .updateTable('historian_batches')
      .set({ updated_at: at })
      .where('org_id', '=', orgId)
      .where('id', 'in', batchIds.slice(start, start + 500))
      .where('status', '<>', 'running')
      .execute()
  }
}

/** force=true: the staged samples replace stored ones at the same tag and timestamp ("latest value wins"). */
export async function mergeStaged(db: Db, orgId: OrgId, batchId: string): Promise<void> {
  // `where true`-style filter: SQLite needs a WHERE before ON CONFLICT in INSERT … SELECT to parse the upsert.
  await sql`
    insert into historian_points (org_id, series_id, ts, value, text, quality, batch_id)
    select s.org_id, s.series_id, s.ts, s.value, s.text, s.quality, s.batch_id
    from historian_staging s where s.batch_id = ${batchId} and s.org_id = ${orgId}
    on conflict (org_id, series_id, ts)
    do update set value = excluded.value, text = excluded.text, quality = excluded.quality, batch_id = excluded.batch_id`.execute(db)
  await db.deleteFrom('historian_staging').where('batch_id', '=', batchId).where('org_id', '=', orgId).execute()
}

/** Running batches of every organisation: the start-up recovery looks for ones whose process died. */
export function listRunningBatches(db: Db): Promise<Array<{ org_id: string; id: string }>> {
  return db.selectFrom('historian_batches').select(['org_id', 'id']).where('status', '=', 'running').execute()
}

/** Site dependents (deletion preview): batches of the site. */
export async function countBatchesOfSite(db: Db, orgId: OrgId, siteCode: string): Promise<number> {
  const row = await db
    .selectFrom('historian_batches')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function countSamplesOfSite(db: Db, orgId: OrgId, siteCode: string): Promise<number> {
  const row = await db
    .selectFrom('historian_points as p')
    .innerJoin('historian_series as s', (j) => j.onRef('s.org_id', '=', 'p.org_id').onRef('s.id', '=', 'p.series_id'))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('s.org_id', '=', orgId)
    .where('s.site_code', '=', siteCode)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export interface BucketRow {
  start: number
  min: number
  max: number
  mean: number
  count: number
  first: number
  last: number
  /** Sample variance (n − 1), null for a single sample. */
  variance: number | null
}

/**
 * Time buckets of the numeric samples, computed in the database with the same SQL on both dialects. The bucket
 * start is ts − ((ts mod b) + b) mod b, i.e. floor(ts / b) · b in integer arithmetic, right for times before 1970
 * too. first/last are the values at the bucket's earliest and latest timestamps (unique per tag by the primary key),
 * each one primary-key lookup a bucket (joined to the materialized rows by timestamp instead, SQLite built two
 * automatic indexes over every sample read, up to 16 MiB of page cache each: issue 29); the variance sums the squared distances to the bucket's mean (a second pass over the materialized rows, exact where
 * the sum of squares less the squared sum loses the digits of large values). Bad samples (quality under 64) are left
 * out unless `includeBad`.
 */
export function bucketsQuery(
  orgId: OrgId,
  seriesId: number,
  bucketMs: number,
  page: { from: number; to: number; limit: number; after?: number; includeBad?: boolean },
) {
  const after = page.after ?? Number.MIN_SAFE_INTEGER
  return sql<BucketRow>`
    with visible as materialized (
      select s.ts, s.value, s.ts - (((s.ts % ${bucketMs}) + ${bucketMs}) % ${bucketMs}) as bucket_start
      from historian_points s
      join historian_batches b on b.org_id = s.org_id and b.id = s.batch_id and b.status in ('complete', 'open')
      where s.org_id = ${orgId} and s.series_id = ${seriesId}
        and s.ts >= ${page.from} and s.ts < ${page.to} and s.value is not null${page.includeBad === true ? sql`` : sql` and s.quality >= 64`}
    ), buckets as (
      select bucket_start, min(value) as mn, max(value) as mx, avg(value) as mean, count(*) as n, min(ts) as t0, max(ts) as t1
      from visible group by bucket_start
    ), spread as (
      select v.bucket_start, sum((v.value - bk.mean) * (v.value - bk.mean)) as ss
      from visible v join buckets bk on bk.bucket_start = v.bucket_start group by v.bucket_start
    )
    select bk.bucket_start as start, bk.mn as min, bk.mx as max, bk.mean as mean, bk.n as count,
      (select f.value from historian_points f where f.org_id = ${orgId} and f.series_id = ${seriesId} and f.ts = bk.t0) as first,
      (select l.value from historian_points l where l.org_id = ${orgId} and l.series_id = ${seriesId} and l.ts = bk.t1) as last,
      case when bk.n > 1 then sp.ss / (bk.n - 1) end as variance
    from buckets bk
    join spread sp on sp.bucket_start = bk.bucket_start
    where bk.bucket_start > ${after}
    order by bk.bucket_start
    limit ${page.limit + 1}`
}

export async function listBuckets(
  db: Db,
  orgId: OrgId,
  seriesId: number,
  bucketMs: number,
  page: { from: number; to: number; limit: number; after?: number; includeBad?: boolean },
): Promise<BucketRow[]> {
  const result = await bucketsQuery(orgId, seriesId, bucketMs, page).execute(db)
  return result.rows.map((r) => ({
    start: Number(r.start),
    min: Number(r.min),
    max: Number(r.max),
    mean: Number(r.mean),
    count: Number(r.count),
    first: Number(r.first),
    last: Number(r.last),
    variance: r.variance === null ? null : Number(r.variance),
  }))
}

/** A sample this batch wanted to store where another value was or is kept; see findCollisions / listStagedCollisions. */
export interface StoredValue {
  value: number | null
  text: string | null
  quality: number
  batch_id: string
}
export interface CollisionRow {
  series_id: number
  ts: number
  stored: StoredValue
}

/**
 * Without force: samples of another batch stored at these (series, ts) keys, i.e. the values kept where this
 * batch's samples were not written (2 parameters a key). The keys are a VALUES list joined on the primary key: one
 * index lookup a key, whatever the table holds (an IN list over the org's rows made both databases scan them all,
 * once per call).
 */
export async function findCollisions(db: Db, orgId: OrgId, batchId: string, keys: Array<{ seriesId: number; ts: number }>): Promise<CollisionRow[]> {
  if (keys.length === 0) return []
  const list = sql.join(keys.map((k) => sql`(cast(${k.seriesId} as integer), cast(${k.ts} as bigint))`))
  // VALUES names its columns column1, column2 on both databases.
  const result = await sql<{ series_id: number; ts: number; value: number | null; text: string | null; quality: number; batch_id: string }>`
    select h.series_id, h.ts, h.value, h.text, h.quality, h.batch_id from (values ${list}) k
    join historian_points h on h.org_id = ${orgId} and h.series_id = k.column1 and h.ts = k.column2
    where h.batch_id <> ${batchId}`.execute(db)
  return result.rows.map((r) => ({
    series_id: Number(r.series_id),
    ts: Number(r.ts),
    stored: { value: r.value === null ? null : Number(r.value), text: r.text, quality: Number(r.quality), batch_id: r.batch_id },
  }))
}

/** With force: the first `limit` staged samples that will replace a stored value, with both values. */
export async function listStagedCollisions(db: Db, orgId: OrgId, batchId: string, limit: number) {
  const result = await stagedCollisionQueries.first(orgId, batchId, limit).execute(db)
  return result.rows.map((r) => ({
    instance_id: r.instance_id,
    tag_key: r.tag_key,
    ts: Number(r.ts),
    staged: { value: r.value === null ? null : Number(r.value), text: r.text, quality: Number(r.quality) },
    stored: { value: r.old_value === null ? null : Number(r.old_value), text: r.old_text, quality: Number(r.old_quality), batch_id: r.old_batch },
  }))
}
