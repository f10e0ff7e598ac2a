import type { Dialect } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'
import type { Row } from '../tenant-transfer/introspect.ts'
import type { OrgId } from '../../ids.ts'
import { deleteBatchPointsIn, deleteSamplesOfBatch, seriesKey, type BatchCoverage } from './store/queries.ts'
import {
  batchPointTsAt,
  countBatchPointsBySeries,
  findBatchForLink,
  listBatchPointsPage,
  listSeriesInByteOrder,
  listSeriesOfPairs,
  type SeriesRow,
  type SeriesSpan,
} from './store/transfer.ts'
import { sampleRow, samplesPart } from './transfer.ts'

/**
 * The historian's side of the fleet link (issue 26, ARCHITECTURE.md § Fleet link): a batch's samples leave the site in
 * chunks (streamBatchSamples) and are stored in the cloud by the tenant package's samples part (storeLinkedSamples),
 * so both paths resolve series the same way. The batch row travels separately (the outbox), after its samples.
 */

/** One sample on the wire, its site and batch named once per chunk: [instanceId, tagKey, ts, value, text, quality]. */
export type LinkSample = [instanceId: string, tagKey: string, ts: number, value: number | null, text: string | null, quality: number]

/** A chunk of a batch's samples: package-shaped rows of the historian_samples part, `chunk` counted from 0. */
export interface BatchSampleChunk {
  chunk: number
  rows: Row[]
}

const PAGE = 2000
const ALL_TIME: Pick<SeriesSpan, 'from' | 'to'> = { from: Number.MIN_SAFE_INTEGER, to: Number.MAX_SAFE_INTEGER }

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

interface SeriesPlan {
  series: SeriesRow
  span: SeriesSpan
}

/**
 * The batch's series in the package's order (instance then tag in byte order, as the "C" collation and SQLite's
 * binary compare them), each with the time span its samples lie in: from the coverage the batch recorded, or, when it
 * recorded none, every series of the site over all time (exact either way: the pages filter by batch_id).
 */
async function planOf(db: Db, dialect: Dialect, orgId: string, siteCode: string, tags: string): Promise<SeriesPlan[]> {
  const spans = new Map<string, { instanceId: string; tagKey: string; from: number; to: number }>()
  for (const c of parseCoverage(tags)) {
    const k = seriesKey(c.instanceId, c.tagKey)
    const s = spans.get(k)
    if (s === undefined) spans.set(k, { instanceId: c.instanceId, tagKey: c.tagKey, from: c.firstTs, to: c.lastTs })
    else {
      s.from = Math.min(s.from, c.firstTs)
      s.to = Math.max(s.to, c.lastTs)
    }
  }
  const plan: SeriesPlan[] = []
  if (spans.size === 0) {
    for (const series of await listSeriesInByteOrder(db, dialect, orgId, siteCode)) plan.push({ series, span: { seriesId: series.id, ...ALL_TIME } })
  } else {
    for (const series of await listSeriesOfPairs(db, orgId, siteCode, [...spans.values()])) {
      const span = spans.get(seriesKey(series.instance_id, series.tag_key))
      if (span !== undefined) plan.push({ series, span: { seriesId: series.id, from: span.from, to: span.to } })
    }
  }
  return plan.sort((a, b) => byteOrder(a.series.instance_id, b.series.instance_id) || byteOrder(a.series.tag_key, b.series.tag_key))
}

function parseCoverage(tags: string): Array<{ instanceId: string; tagKey: string; firstTs: number; lastTs: number }> {
  let parsed: unknown
  try {
    parsed = JSON.parse(tags)
  } catch {
    return []
  }
  if (!Array.isArray(parsed)) return []
  return parsed.flatMap((c: { instanceId?: unknown; tagKey?: unknown; firstTs?: unknown; lastTs?: unknown }) =>
    typeof c?.instanceId === 'string' && typeof c.tagKey === 'string' && typeof c.firstTs === 'number' && typeof c.lastTs === 'number'
      ? [{ instanceId: c.instanceId, tagKey: c.tagKey, firstTs: c.firstTs, lastTs: c.lastTs }]
      : [],
  )
}

/**
 * A finished batch's samples (the points whose batch_id is the batch) as package-shaped rows, series by series in
 * byte order and by time within each, cut into chunks of `chunkSize` samples: chunk n holds the samples at positions
 * [n·chunkSize, (n+1)·chunkSize) of that order, the same on every call while the batch's samples do not change, so
 * an upload resumes at any chunk. Starting at `fromChunk` skips whole series by their counts and positions inside
 * one series with an offset on its primary key, without reading the skipped samples. Memory: the batch's series
 * list (one entry a tag) plus one page and one chunk, never the batch. Nothing for an absent batch; a running or
 * open batch's samples are still changing, so asking for them is a programming error (TypeError).
 */
export async function* streamBatchSamples(
  db: Db,
  dialect: Dialect,
  orgId: string,
  batchId: string,
  o: { fromChunk?: number; chunkSize: number },
): AsyncGenerator<BatchSampleChunk> {
  const fromChunk = o.fromChunk ?? 0
  if (!Number.isSafeInteger(o.chunkSize) || o.chunkSize < 1) throw new TypeError('chunkSize must be a positive integer')
  if (!Number.isSafeInteger(fromChunk) || fromChunk < 0) throw new TypeError('fromChunk must be a non-negative integer')
  const batch = await findBatchForLink(db, orgId, batchId)
  if (batch === undefined) return
  if (batch.status === 'running' || batch.status === 'open')
    throw new TypeError(`batch ${batchId} is still ${batch.status}; its samples move once it has ended`)
  const plan = await planOf(db, dialect, orgId, batch.site_code, batch.tags)

  let skip = fromChunk * o.chunkSize
  let firstTs: number | undefined
  let i = 0
  if (skip > 0) {
    const counts = await countBatchPointsBySeries(
      db,
      orgId,
      batchId,
      plan.map((p) => p.span),
    )
    for (; i < plan.length; i++) {
      const n = counts.get(plan[i]!.series.id) ?? 0
      if (n <= skip) {
        skip -= n
        continue
      }
      firstTs = await batchPointTsAt(db, orgId, batchId, plan[i]!.span, skip)
      break
    }
  }

  let chunk = fromChunk
  let rows: Row[] = []
  for (; i < plan.length; i++) {
    const { series, span } = plan[i]!
    let cursor: { afterTs?: number; fromTs?: number } = firstTs === undefined ? {} : { fromTs: firstTs }
    firstTs = undefined
    for (;;) {
      const page = await listBatchPointsPage(db, orgId, batchId, span, cursor, PAGE)
      for (const p of page) {
        rows.push(sampleRow(series, p))
        if (rows.length === o.chunkSize) {
          yield { chunk: chunk++, rows }
          rows = []
        }
      }
      if (page.length < PAGE) break
      cursor = { afterTs: Number(page[page.length - 1]!.ts) }
    }
  }
  if (rows.length > 0) yield { chunk, rows }
}

/** The site a batch of this organisation belongs to, or undefined when this server holds no such batch. */
export async function siteOfBatch(db: Db, orgId: string, batchId: string): Promise<string | undefined> {
  return (await findBatchForLink(db, orgId, batchId))?.site_code
}

/**
 * Stores a chunk of one site's batch's samples (the receiving side), replacing those at the same series and time
 * as the tenant import does: the site is authoritative for its samples. Run it inside the caller's transaction.
 * The caller has checked each value and that each instance exists in the site (series rows need the site).
 */
export async function storeLinkedSamples(trx: Db, orgId: string, siteCode: string, batchId: string, samples: readonly LinkSample[]): Promise<void> {
  if (samples.length === 0) return
  const rows: Row[] = samples.map(([instanceId, tagKey, ts, value, text, quality]) => ({
    site_code: siteCode,
    instance_id: instanceId,
    tag_key: tagKey,
    ts,
    value,
    text,
    quality,
    batch_id: batchId,
  }))
  await samplesPart.upsert(trx, orgId, rows, new Map())
}

/**
 * Removes the samples a site's batch holds in one site of this server (the receiving side, when the site uploads the
 * batch again from its first chunk: what the new upload no longer lists must not stay). Through the batch's recorded
 * coverage when this server holds its row, else over every series of the site (filtered by batch): the points have
 * no batch index. Run it inside the caller's transaction. Returns how many samples went.
 */
export async function removeLinkedSamples(trx: Db, orgId: string, siteCode: string, batchId: string): Promise<number> {
  const batch = await findBatchForLink(trx, orgId, batchId)
  const coverage: BatchCoverage[] = batch === undefined ? [] : parseCoverage(batch.tags)
  return deleteSamplesOfBatch(trx, orgId as OrgId, batchId, { siteCode, coverage })
}

/** A sample's place in a batch's order: instance, then tag (byte order), then time. */
export type LinkKey = readonly [instanceId: string, tagKey: string, ts: number]

/** A series of a site and the inclusive time span a batch's samples may lie in there. */
export interface HeldSpan {
  seriesId: number
  instanceId: string
  tagKey: string
  from: number
  to: number
}

/** The key of a chunk's last sample (chunks are in the batch's order). */
export function lastKeyOf(samples: readonly LinkSample[]): LinkKey | null {
  const last = samples.at(-1)
  return last === undefined ? null : [last[0], last[1], last[2]]
}

/**
 * Where this server shows a site's batch: the series and spans its batch row's coverage records, or null when it holds
 * no row of the batch in that site (its samples are not shown yet) or the row recorded no coverage.
 */
export async function shownBatchSpans(db: Db, dialect: Dialect, orgId: string, siteCode: string, batchId: string): Promise<HeldSpan[] | null> {
  const batch = await findBatchForLink(db, orgId, batchId)
  if (batch === undefined || batch.site_code !== siteCode || parseCoverage(batch.tags).length === 0) return null
  return (await planOf(db, dialect, orgId, siteCode, batch.tags)).map(({ series, span }) => ({
    seriesId: series.id,
    instanceId: series.instance_id,
    tagKey: series.tag_key,
    from: span.from,
    to: span.to,
  }))
}

/** The series and spans of a chunk's samples, once stored (their series exist then). */
export async function chunkSpans(db: Db, orgId: string, siteCode: string, samples: readonly LinkSample[]): Promise<HeldSpan[]> {
  const spans = new Map<string, { instanceId: string; tagKey: string; from: number; to: number }>()
  for (const [instanceId, tagKey, ts] of samples) {
    const k = seriesKey(instanceId, tagKey)
    const s = spans.get(k)
    if (s === undefined) spans.set(k, { instanceId, tagKey, from: ts, to: ts })
    else {
      s.from = Math.min(s.from, ts)
      s.to = Math.max(s.to, ts)
    }
  }
  if (spans.size === 0) return []
  return (await listSeriesOfPairs(db, orgId, siteCode, [...spans.values()])).flatMap((series) => {
    const s = spans.get(seriesKey(series.instance_id, series.tag_key))
    return s === undefined ? [] : [{ seriesId: series.id, instanceId: series.instance_id, tagKey: series.tag_key, from: s.from, to: s.to }]
  })
}

/** Byte order of a span's series against a key's (instance, then tag). */
function seriesOrder(span: HeldSpan, key: LinkKey): number {
  return byteOrder(span.instanceId, key[0]) || byteOrder(span.tagKey, key[1])
}

/**
 * Removes the batch's samples whose key lies after `after` (null: from the first) and at or before `upTo` (null: to the
 * last), looking only within `spans` (where the batch's samples may be): a statement a span that the keys reach, a
 * primary-key range each. Run it inside the caller's transaction. Returns how many samples went.
 */
export async function removeLinkedSamplesBetween(
  trx: Db,
  orgId: string,
  batchId: string,
  spans: readonly HeldSpan[],
  after: LinkKey | null,
  upTo: LinkKey | null,
): Promise<number> {
  let removed = 0
  for (const span of spans) {
    const fromAfter = after === null ? 1 : seriesOrder(span, after)
    const toUpTo = upTo === null ? -1 : seriesOrder(span, upTo)
    if (fromAfter < 0 || toUpTo > 0) continue
    // Sample times are whole milliseconds: "after ts" is "from ts + 1".
    const from = fromAfter === 0 ? Math.max(span.from, after![2] + 1) : span.from
    const to = toUpTo === 0 ? Math.min(span.to, upTo![2]) : span.to
    if (from <= to) removed += await deleteBatchPointsIn(trx, orgId as OrgId, batchId, { seriesId: span.seriesId, from, to })
  }
  return removed
}
