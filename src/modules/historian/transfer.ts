import { sql } from 'kysely'
import type { Dialect } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'
import { describeTable, type Row, type TableShape } from '../tenant-transfer/introspect.ts'
import type { StoredPart, StoredParts } from '../tenant-transfer/tables.ts'
import { ensureSeries, seriesKey } from './store/queries.ts'

/**
 * The tenant package's `historian_samples` part, one row a sample as before the series table existed
 * (site_code, instance_id, tag_key, ts, value, text, quality, batch_id), so packages of any version import. Stored as
 * historian_series + historian_points: the series key is resolved here, both ways.
 */
const SHAPE: TableShape = {
  name: 'historian_samples',
  columns: ['batch_id', 'instance_id', 'org_id', 'quality', 'site_code', 'tag_key', 'text', 'ts', 'value'],
  primaryKey: ['org_id', 'site_code', 'instance_id', 'tag_key', 'ts'],
  textColumns: new Set(['batch_id', 'instance_id', 'org_id', 'site_code', 'tag_key', 'text']),
  types: { batch_id: 'text', instance_id: 'text', org_id: 'text', quality: 'smallint', site_code: 'text', tag_key: 'text', text: 'text', ts: 'bigint', value: 'double precision' },
}

const PAGE = 2000

interface SeriesRow { id: number; site_code: string; instance_id: string; tag_key: string }

const toRow = (s: SeriesRow, p: { ts: unknown; value: unknown; text: unknown; quality: unknown; batch_id: unknown }): Row => ({
  batch_id: p.batch_id, instance_id: s.instance_id, quality: Number(p.quality), site_code: s.site_code, tag_key: s.tag_key,
  text: p.text ?? null, ts: Number(p.ts), value: p.value === null || p.value === undefined ? null : Number(p.value),
})

async function present(db: Db, dialect: Dialect): Promise<boolean> {
  return (await describeTable(db, dialect, 'historian_points')) !== undefined
}

interface PointRow { series_id: unknown; ts: unknown; value: unknown; text: unknown; quality: unknown; batch_id: unknown }

/**
 * The package's order is the part's key order: series by (site_code, instance_id, tag_key) in byte order (the
 * "C" collation on PostgreSQL, as SQLite's binary), then each series' samples by time. One ordered pass over the
 * points' primary key (org_id, series_id, ts), a page of at most ~PAGE samples a statement whatever the series'
 * sizes: consecutive small series (in package order) are read together by one `series_id in (…)` page and put in
 * package order here, a large series is keyset-paged by time. Memory: the organisation's series list and their
 * sample counts (one row a series), plus one page; never proportional to the samples.
 */
async function* stream(db: Db, dialect: Dialect, orgId: string, siteCode: string | null): AsyncGenerator<Row> {
  const c = dialect === 'postgres' ? sql` collate "C"` : sql``
  const site = siteCode === null ? sql`` : sql` and site_code = ${siteCode}`
  const { rows: listed } = await sql<SeriesRow>`select id, site_code, instance_id, tag_key from historian_series
    where org_id = ${orgId}${site} order by site_code${c}, instance_id${c}, tag_key${c}`.execute(db)
  if (listed.length === 0) return
  const series = listed.map((s) => ({ ...s, id: Number(s.id) }))
  const { rows: counted } = await sql<{ series_id: unknown; n: unknown }>`select series_id, count(*) as n from historian_points
    where org_id = ${orgId} group by series_id`.execute(db)
  const counts = new Map(counted.map((r) => [Number(r.series_id), Number(r.n)]))
  const columns = sql`series_id, ts, value, text, quality, batch_id`
  let i = 0
  while (i < series.length) {
    // A window of consecutive series holding at most PAGE samples together (at least one series).
    let j = i
    let total = 0
    while (j < series.length && (j === i || total + (counts.get(series[j]!.id) ?? 0) <= PAGE)) total += counts.get(series[j++]!.id) ?? 0
    if (j - i > 1 || total <= PAGE) {
      const window = series.slice(i, j)
      const { rows } = await sql<PointRow>`select ${columns} from historian_points
        where org_id = ${orgId} and series_id in (${sql.join(window.map((s) => s.id))}) order by series_id, ts`.execute(db)
      // Rows come in (series_id, ts) order: each series' rows are one run, emitted in the window's (package) order.
      const runs = new Map<number, PointRow[]>()
      for (const p of rows) {
        const id = Number(p.series_id)
        let run = runs.get(id)
        if (!run) runs.set(id, (run = []))
        run.push(p)
      }
      for (const s of window) for (const p of runs.get(s.id) ?? []) yield toRow(s, p)
      i = j
      continue
    }
    // One large series: keyset pages by time.
    const s = series[i]!
    let after: number | undefined
    for (;;) {
      const cursor = after === undefined ? sql`` : sql` and ts > ${after}`
      const { rows } = await sql<PointRow>`select ${columns} from historian_points
        where org_id = ${orgId} and series_id = ${s.id}${cursor} order by ts limit ${PAGE}`.execute(db)
      for (const p of rows) yield toRow(s, p)
      if (rows.length < PAGE) break
      after = Number(rows[rows.length - 1]!.ts)
    }
    i += 1
  }
}

async function hasAnyRow(db: Db, orgId: string): Promise<boolean> {
  const { rows } = await sql`select 1 from historian_series s join historian_points p on p.org_id = s.org_id and p.series_id = s.id where s.org_id = ${orgId} limit 1`.execute(db)
  return rows.length > 0
}

/** The series of the rows' (site, instance, tag) keys that exist, by seriesKey within a site. */
async function seriesOf(db: Db, orgId: string, rows: Row[]): Promise<Map<string, SeriesRow>> {
  const out = new Map<string, SeriesRow>()
  const sites = new Set(rows.map((r) => String(r.site_code)))
  for (const site of sites) {
    const found = await db.selectFrom('historian_series').select(['id', 'site_code', 'instance_id', 'tag_key'])
      .where('org_id', '=', orgId).where('site_code', '=', site)
      .where('instance_id', 'in', [...new Set(rows.filter((r) => r.site_code === site).map((r) => String(r.instance_id)))]).execute()
    for (const s of found) out.set(`${s.site_code}\u0000${seriesKey(s.instance_id, s.tag_key)}`, { ...s, id: Number(s.id) })
  }
  return out
}

async function findExisting(db: Db, _dialect: Dialect, orgId: string, rows: Row[]): Promise<Row[]> {
  const series = await seriesOf(db, orgId, rows)
  const byId = new Map([...series.values()].map((s) => [s.id, s]))
  const keys = rows.flatMap((r) => {
    const s = series.get(`${String(r.site_code)}\u0000${seriesKey(String(r.instance_id), String(r.tag_key))}`)
    return s === undefined ? [] : [sql`(cast(${s.id} as integer), cast(${r.ts} as bigint))`]
  })
  if (keys.length === 0) return []
  const { rows: found } = await sql<{ series_id: number; ts: number; value: number | null; text: string | null; quality: number; batch_id: string }>`
    select series_id, ts, value, text, quality, batch_id from historian_points
    where org_id = ${orgId} and (series_id, ts) in (values ${sql.join(keys)})`.execute(db)
  return found.map((p) => toRow(byId.get(Number(p.series_id))!, p))
}

/**
 * Inserts the samples, replacing those at the same series and time (the caller decided they may be replaced).
 * `memo` lives for one import (one transaction): series ids resolved by earlier batches are not looked up again.
 */
async function upsert(db: Db, orgId: string, rows: Row[], memo: Map<string, unknown>): Promise<void> {
  const ids = memo as Map<string, number>
  for (const site of new Set(rows.map((r) => String(r.site_code)))) {
    const pairs = new Map<string, { instanceId: string; tagKey: string }>()
    for (const r of rows) {
      if (r.site_code !== site) continue
      const k = seriesKey(String(r.instance_id), String(r.tag_key))
      if (!ids.has(`${site}\u0000${k}`)) pairs.set(k, { instanceId: String(r.instance_id), tagKey: String(r.tag_key) })
    }
    if (pairs.size === 0) continue
    for (const [k, id] of await ensureSeries(db, orgId as OrgId, site, [...pairs.values()])) ids.set(`${site}\u0000${k}`, id)
  }
  for (let start = 0; start < rows.length; start += 2000) {
    const values = sql.join(rows.slice(start, start + 2000).map((r) => {
      const id = ids.get(`${String(r.site_code)}\u0000${seriesKey(String(r.instance_id), String(r.tag_key))}`)!
      return sql`(${orgId}, ${id}, ${r.ts}, ${r.value ?? null}, ${r.text ?? null}, ${r.quality}, ${r.batch_id})`
    }))
    await sql`insert into historian_points (org_id, series_id, ts, value, text, quality, batch_id) values ${values}
      on conflict (org_id, series_id, ts) do update set value = excluded.value, text = excluded.text, quality = excluded.quality, batch_id = excluded.batch_id`.execute(db)
  }
}

export const samplesPart: StoredPart = { shape: SHAPE, present, stream, hasAnyRow, findExisting, upsert }

/** What the historian plugs into the tenant transfer (createTenantTransferService's `storedParts`). */
export const historianStoredParts: StoredParts = { [SHAPE.name]: samplesPart }
