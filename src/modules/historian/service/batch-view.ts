import type { HistorianBatchesTable } from '../../../db/schema.ts'
import type { ListedBatchRow } from '../store/queries.ts'
import type { Rejection } from '../parse/index.ts'

export interface TagCoverage {
  historianTag: string
  instanceId: string
  tagKey: string
  unit: string | null
  scale: number
  samples: number
  firstTs: number | null
  lastTs: number | null
}

/** What the batch keeps besides its counters (historian_batches.report, JSON). */
export interface BatchReport {
  separator: string | null
  timezone: string
  rejections: Rejection[]
  unmappedTags: Array<{ tag: string; rows: number }>
  emptyCells: number
  sentinelCells: number
  /**
   * Set once the batch completes (or a dry run ends), with `duplicatesInFile`: absent while it runs, in a failed
   * batch, and in batches imported before they were counted. See schemas.ts for the accounting they close.
   */
  valuesRead?: number
  duplicatesInFile?: number
  /** force=true over an earlier import of the same two files. */
  forcedOver: string | null
  /**
   * The first MAX_COLLISIONS_LISTED samples that met a stored value at the same instance, tag and timestamp:
   * without force the stored value was kept (`keptStored`), with force this batch's value replaced it
   * (`replacedStored`). Absent in batches imported before the list existed.
   */
  collisions?: CollisionEntry[]
}

export interface CollisionValue {
  batchId: string
  value: number | null
  text: string | null
  quality: number
}
export interface CollisionEntry {
  instanceId: string
  tagKey: string
  ts: number
  resolution: 'keptStored' | 'replacedStored'
  kept: CollisionValue
  discarded: CollisionValue
}

/**
 * A batch's report as stored. One kept without its lists or settings (a batch row a package or the fleet link carried,
 * written by another version) reads as empty lists and no settings (timezone UTC) instead of failing the read.
 */
export function readReport(text: string): BatchReport {
  const stored = JSON.parse(text) as Partial<BatchReport>
  return {
    separator: null,
    timezone: 'UTC',
    emptyCells: 0,
    sentinelCells: 0,
    forcedOver: null,
    ...stored,
    rejections: stored.rejections ?? [],
    unmappedTags: stored.unmappedTags ?? [],
  }
}

const QUALITY_NAME = (code: number) => (code >= 192 ? 'good' : code >= 64 ? 'uncertain' : 'bad')
const collisionValue = (v: CollisionValue) => ({ batchId: v.batchId, value: v.value, text: v.text, quality: QUALITY_NAME(v.quality) })

/** The API shape of one listed collision (schemas.ts CollisionSchema). */
export function toCollision(c: CollisionEntry) {
  return {
    instanceId: c.instanceId,
    tagKey: c.tagKey,
    ts: new Date(c.ts).toISOString(),
    resolution: c.resolution,
    kept: collisionValue(c.kept),
    discarded: collisionValue(c.discarded),
  }
}

/** How many collisions the batch lists (and pages through); the count in the batch is complete. */
export function listedCollisions(report: BatchReport): CollisionEntry[] {
  return report.collisions ?? []
}

/** Collisions shown in the batch itself; the rest are paged at reportUrl. */
const FIRST_COLLISIONS = 20

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/** The columns a batch and its summary both show. */
type SummaryColumns = Omit<ListedBatchRow, 'tag_count'>

/** What a batch and its summary share (schemas.ts BatchFields). */
function batchFields(row: SummaryColumns, report: BatchReport, isDryRun: boolean) {
  return {
    id: isDryRun ? null : row.id,
    siteId: row.site_code,
    format: row.format,
    status: isDryRun ? 'dryRun' : row.status,
    isDryRun,
    isForced: row.is_forced === 1,
    forcedOver: report.forcedOver,
    rowsRead: row.rows_read,
    samplesStored: row.samples_stored,
    rowsRejected: row.rejected_count,
    collisions: row.collision_count,
    replaced: row.replaced_count,
    ...accounting(report),
    timeRange: row.first_ts === null || row.last_ts === null ? null : { from: iso(row.first_ts)!, to: iso(row.last_ts)! },
    contentHash: { trendCsv: `sha256:${row.trend_sha256}`, mappingCsv: `sha256:${row.mapping_sha256}` },
    trendFileName: row.trend_name,
    separator: report.separator,
    timezone: report.timezone,
    progress: { bytesRead: row.bytes_read, bytesTotal: row.bytes_total, rowsRead: row.rows_read, samplesWritten: row.samples_stored },
    error: row.error,
    createdBy: row.created_by,
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
    completedAt: iso(row.completed_at),
  }
}

/** The counters that close the accounting of a finished batch; null where the batch has none (BatchReport.valuesRead). */
function accounting(report: BatchReport) {
  const isFinal = report.valuesRead !== undefined
  return {
    valuesRead: report.valuesRead ?? null,
    duplicatesInFile: report.duplicatesInFile ?? null,
    emptyValues: isFinal ? report.emptyCells : null,
    sentinelValues: isFinal ? report.sentinelCells : null,
  }
}

const reportUrl = (row: SummaryColumns, isDryRun: boolean, report: string) => (isDryRun ? null : `/api/historian/import-batches/${row.id}/${report}`)
const collisionCount = (row: SummaryColumns) => (row.is_forced === 1 ? row.replaced_count : row.collision_count)

/** The API shape of a batch (schemas.ts BatchSchema); `id` is null for a dry run. */
export function toBatch(row: HistorianBatchesTable, options: { isDryRun?: boolean } = {}) {
  const report = readReport(row.report)
  const tags = JSON.parse(row.tags) as TagCoverage[]
  const isDryRun = options.isDryRun === true
  return {
    ...batchFields(row, report, isDryRun),
    rejections: {
      count: row.rejected_count,
      first: report.rejections.map((r) => (r.column === undefined ? { line: r.line, reason: r.reason } : { line: r.line, reason: r.reason, column: r.column })),
      reportUrl: reportUrl(row, isDryRun, 'rejections'),
    },
    collisionReport: {
      count: collisionCount(row),
      listed: listedCollisions(report).length,
      first: listedCollisions(report).slice(0, FIRST_COLLISIONS).map(toCollision),
      reportUrl: reportUrl(row, isDryRun, 'collisions'),
    },
    unmappedTags: report.unmappedTags,
    tags: tags.map((t) => ({ ...t, firstTs: iso(t.firstTs), lastTs: iso(t.lastTs) })),
  }
}

export type BatchView = ReturnType<typeof toBatch>

/**
 * A batch as the list shows it (schemas.ts BatchSummarySchema): the lists that grow with the file (tags covered,
 * unmapped tags, first rejections and collisions) are counted, not listed; GET …/{batchId} has them.
 */
export function toBatchSummary(row: ListedBatchRow) {
  const report = readReport(row.report)
  return {
    ...batchFields(row, report, false),
    rejections: { count: row.rejected_count, reportUrl: reportUrl(row, false, 'rejections') },
    collisionReport: { count: collisionCount(row), listed: listedCollisions(report).length, reportUrl: reportUrl(row, false, 'collisions') },
    unmappedTagCount: report.unmappedTags.length,
    tagCount: row.tag_count,
  }
}
