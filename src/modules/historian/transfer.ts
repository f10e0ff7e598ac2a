import type { Dialect } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'
import { describeTable, type Row, type TableShape } from '../tenant-transfer/introspect.ts'
import type { StoredPart, StoredParts } from '../tenant-transfer/tables.ts'
import { ensureSeries, seriesKey } from './store/queries.ts'
import {
  countPointsBySeries,
  findPoints,
  hasAnySample,
  listPointsOfSeries,
  listPointsPage,
  listSeriesInByteOrder,
  listSeriesOfInstances,
  upsertPoints,
  type PointRow,
  type SeriesRow,
} from './store/transfer.ts'

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
  types: {
    batch_id: 'text',
    instance_id: 'text',
    org_id: 'text',
    quality: 'smallint',
    site_code: 'text',
    tag_key: 'text',
    text: 'text',
    ts: 'bigint',
    value: 'double precision',
  },
  notNull: new Set(['batch_id', 'instance_id', 'org_id', 'quality', 'site_code', 'tag_key', 'ts']),
}

const PAGE = 2000

/** A stored sample as the package (and the fleet link's chunks) carry it: one row a sample, its series resolved. */
export const sampleRow = (s: SeriesRow, p: { ts: unknown; value: unknown; text: unknown; quality: unknown; batch_id: unknown }): Row => ({
  batch_id: p.batch_id,
  instance_id: s.instance_id,
  quality: Number(p.quality),
  site_code: s.site_code,
  tag_key: s.tag_key,
  text: p.text ?? null,
  ts: Number(p.ts),
  value: p.value === null || p.value === undefined ? null : Number(p.value),
})

async function present(db: Db, dialect: Dialect): Promise<boolean> {
  return (await describeTable(db, dialect, 'historian_points')) !== undefined
}

/**
 * The package's order is the part's key order: series by (site_code, instance_id, tag_key) in byte order (the
 * "C" collation on PostgreSQL, as SQLite's binary), then each series' samples by time. One ordered pass over the
 * points' primary key (org_id, series_id, ts), a page of at most ~PAGE samples a statement whatever the series'
 * sizes: consecutive small series (in package order) are read together by one `series_id in (…)` page and put in
 * package order here, a large series is keyset-paged by time. Memory: the organisation's series list and their
 * sample counts (one row a series), plus one page; never proportional to the samples.
 */
async function* stream(db: Db, dialect: Dialect, orgId: string, siteCode: string | null): AsyncGenerator<Row> {
  const series = await listSeriesInByteOrder(db, dialect, orgId, siteCode)
  if (series.length === 0) return
  const counts = await countPointsBySeries(db, orgId)
  let i = 0
  while (i < series.length) {
    // A window of consecutive series holding at most PAGE samples together (at least one series).
    let j = i
    let total = 0
    while (j < series.length && (j === i || total + (counts.get(series[j]!.id) ?? 0) <= PAGE)) total += counts.get(series[j++]!.id) ?? 0
    if (j - i > 1 || total <= PAGE) {
      const window = series.slice(i, j)
      const rows = await listPointsOfSeries(
        db,
        orgId,
        window.map((s) => s.id),
      )
      // Rows come in (series_id, ts) order: each series' rows are one run, emitted in the window's (package) order.
      const runs = new Map<number, PointRow[]>()
      for (const p of rows) {
        const id = Number(p.series_id)
        let run = runs.get(id)
        if (!run) runs.set(id, (run = []))
        run.push(p)
      }
      for (const s of window) for (const p of runs.get(s.id) ?? []) yield sampleRow(s, p)
      i = j
      continue
    }
    // One large series: keyset pages by time.
    const s = series[i]!
    let after: number | undefined
    for (;;) {
      const rows = await listPointsPage(db, orgId, s.id, after, PAGE)
      for (const p of rows) yield sampleRow(s, p)
      if (rows.length < PAGE) break
      after = Number(rows[rows.length - 1]!.ts)
    }
    i += 1
  }
}

/** The series of the rows' (site, instance, tag) keys that exist, by seriesKey within a site. */
async function seriesOf(db: Db, orgId: string, rows: Row[]): Promise<Map<string, SeriesRow>> {
  const out = new Map<string, SeriesRow>()
  const sites = new Set(rows.map((r) => String(r.site_code)))
  for (const site of sites) {
    const found = await listSeriesOfInstances(db, orgId, site, [...new Set(rows.filter((r) => r.site_code === site).map((r) => String(r.instance_id)))])
    for (const s of found) out.set(`${s.site_code}\u0000${seriesKey(s.instance_id, s.tag_key)}`, s)
  }
  return out
}

async function findExisting(db: Db, _dialect: Dialect, orgId: string, rows: Row[]): Promise<Row[]> {
  const series = await seriesOf(db, orgId, rows)
  const byId = new Map([...series.values()].map((s) => [s.id, s]))
  const keys = rows.flatMap((r) => {
    const s = series.get(`${String(r.site_code)}\u0000${seriesKey(String(r.instance_id), String(r.tag_key))}`)
    return s === undefined ? [] : [{ seriesId: s.id, ts: r.ts }]
  })
  if (keys.length === 0) return []
  const found = await findPoints(db, orgId, keys)
  return found.map((p) => sampleRow(byId.get(Number(p.series_id))!, p))
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
    await upsertPoints(
      db,
      orgId,
      rows.slice(start, start + 2000).map((r) => ({
        seriesId: ids.get(`${String(r.site_code)}\u0000${seriesKey(String(r.instance_id), String(r.tag_key))}`)!,
        ts: r.ts,
        value: r.value,
        text: r.text,
        quality: r.quality,
        batchId: r.batch_id,
      })),
    )
  }
}

export const samplesPart: StoredPart = { shape: SHAPE, present, stream, hasAnyRow: hasAnySample, findExisting, upsert }

/** What the historian plugs into the tenant transfer (createTenantTransferService's `storedParts`). */
export const historianStoredParts: StoredParts = { [SHAPE.name]: samplesPart }
