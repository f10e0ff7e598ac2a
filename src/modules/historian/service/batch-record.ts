import type { Actor } from '../../../identity.ts'
import type { Clock } from '../../../clock.ts'
import type { HistorianBatchesTable } from '../../../db/schema.ts'
import { newId, type OrgId } from '../../../ids.ts'
import type { ParseOptions, ParseSummary, Quality, Rejection, SampleBatch, TagMapping } from '../parse/index.ts'
import type { BatchChanges } from '../store/import-store.ts'
import type { BatchWhere, listStagedCollisions } from '../store/queries.ts'
import type { SampleBuffer } from '../store/sample-buffer.ts'
import { sampleValueRule } from '../sample-value.ts'
import type { BatchReport, CollisionEntry, TagCoverage } from './batch-view.ts'
import { MAX_HISTORIAN_TAG_LENGTH } from '../parse/mapping.ts'
import { quoted } from '../../../errors/quoted.ts'

/** Collisions listed in the batch report (all are counted); the report pages through these. */
export const MAX_COLLISIONS_LISTED = 1000

/**
 * The unmapped tags a batch lists and remembers, the first in file order. Rows of further unmapped tags are rejected
 * and counted like the others, but their names are not kept: a file of distinct names (say a `wide` export read as
 * `long`, each value taken for a tag) must not grow the import's memory with every row.
 */
export const MAX_UNMAPPED_TAGS_LISTED = 1000

/** A tag longer than any mapping may name is not listed as unmapped (its name could be 1 MiB): its rows say why. */
const unmappedReason = (tag: string) =>
  tag.length > MAX_HISTORIAN_TAG_LENGTH
    ? `historian tag ${quoted(tag)} is longer than ${MAX_HISTORIAN_TAG_LENGTH} characters, which no mapping_csv names`
    : `historian tag ${quoted(tag)} is not in mapping_csv`

const QUALITY_CODE: Record<Quality, number> = { good: 192, uncertain: 64, bad: 0 }

export interface ImportPlan {
  orgId: OrgId
  actor: Actor
  siteCode: string
  options: ParseOptions & { timezone: string }
  mapping: Map<string, TagMapping>
  mappingSha256: string
  trendName: string | null
  isForced: boolean
  isDryRun: boolean
  bytesTotal: number | null
}

interface TagState {
  coverage: TagCoverage | null
  rows: number
  pair: number
}

type StagedCollision = Awaited<ReturnType<typeof listStagedCollisions>>[number]

/**
 * The batch's bookkeeping: its row (counters, status, coverage, report) and what the report lists (unmapped tags,
 * rejections, collisions). It reads no database: the import (ImportRun) and its writes (WritePipeline) tell it what
 * happened and store the changes it answers.
 */
export class BatchRecord {
  readonly #plan: ImportPlan
  readonly #clock: Clock
  readonly #row: HistorianBatchesTable
  readonly #tags = new Map<string, TagState>()
  #unmappedTagsListed = 0
  /** The state of every unmapped tag past MAX_UNMAPPED_TAGS_LISTED: rows counted, the names not kept. */
  readonly #unlisted: TagState = { coverage: null, rows: 0, pair: -1 }
  readonly #ownRejections: Rejection[] = []
  readonly #collisions: CollisionEntry[] = []
  /** Samples dropped because a later row of their chunk has the same series and timestamp. */
  #duplicatesInChunks = 0
  /** The report as the parse left it (parsed); completing adds to it. */
  #finalReport: BatchReport | undefined

  constructor(plan: ImportPlan, clock: Clock) {
    this.#plan = plan
    this.#clock = clock
    const now = clock.now()
    this.#row = {
      org_id: plan.orgId,
      site_code: plan.siteCode,
      id: newId('bat', now),
      format: plan.options.format,
      status: 'running',
      rows_read: 0,
      samples_stored: 0,
      rejected_count: 0,
      collision_count: 0,
      replaced_count: 0,
      bytes_read: 0,
      bytes_total: plan.bytesTotal,
      first_ts: null,
      last_ts: null,
      tags: '[]',
      report: JSON.stringify(this.#report(null, 0, 0, null)),
      options: JSON.stringify(optionsRecord(plan.options)),
      trend_sha256: '',
      mapping_sha256: plan.mappingSha256,
      trend_name: plan.trendName,
      is_forced: plan.isForced ? 1 : 0,
      error: null,
      created_by: `${plan.actor.kind}:${plan.actor.subject}`,
      created_at: now,
      updated_at: now,
      completed_at: null,
    }
  }

  get id(): string {
    return this.#row.id
  }

  /** The batch row as it stands (the one inserted when the import begins, the one answered when it ends). */
  get row(): HistorianBatchesTable {
    return this.#row
  }

  /** The two files' hashes: the same pair of files in the same site is one batch (a twin). */
  get files(): { trendSha256: string; mappingSha256: string } {
    return { trendSha256: this.#row.trend_sha256, mappingSha256: this.#row.mapping_sha256 }
  }

  /** Where the batch's samples lie: its site and the coverage recorded so far. */
  where(): BatchWhere {
    return { siteCode: this.#plan.siteCode, coverage: this.#covered() }
  }

  /** Counts one parsed batch of the file, and puts its mapped samples (scaled, quality coded) into `into`. */
  add(batch: SampleBatch, bytesRead: number, into: SampleBuffer): void {
    const row = this.#row
    const maxKept = this.#plan.options.maxRejections ?? 100
    row.format = batch.format
    const samples = batch.samples
    for (let i = 0; i < samples.length; i++) {
      const tag = samples.tags[i]!
      const state = this.#tags.get(tag) ?? this.#tagState(tag, into)
      const c = state.coverage
      if (c === null) {
        state.rows++
        row.rejected_count++
        if (this.#ownRejections.length < maxKept) this.#ownRejections.push({ line: samples.lines[i]!, reason: unmappedReason(tag) })
        continue
      }
      const ts = samples.ts[i]!
      // Mapping `scale` multiplies numbers only; a text state is kept as it is.
      const text = samples.texts[i] ?? null
      const value = text === null ? samples.values[i]! * c.scale : null
      const valueRule = value === null ? undefined : sampleValueRule(value)
      if (valueRule !== undefined) {
        row.rejected_count++
        if (this.#ownRejections.length < maxKept)
          this.#ownRejections.push({
            line: samples.lines[i]!,
            reason: `value ${samples.values[i]}${c.scale === 1 ? '' : ` × scale ${c.scale}`} is not ${valueRule}`,
          })
        continue
      }
      c.samples++
      if (c.firstTs === null || ts < c.firstTs) c.firstTs = ts
      if (c.lastTs === null || ts > c.lastTs) c.lastTs = ts
      into.push(state.pair, ts, value, text, QUALITY_CODE[samples.qualities[i]!])
    }
    row.rows_read += batch.rowsRead
    row.rejected_count += batch.rejections.length
    row.bytes_read = bytesRead
  }

  /** A chunk's duplicates (dropped), and for a dry run the samples that would have been stored. */
  chunkCounted(duplicates: number, dryRunSamples = 0): void {
    this.#duplicatesInChunks += duplicates
    this.#row.samples_stored += dryRunSamples
  }

  /**
   * The row's changes recorded before a chunk is written: the coverage so far (a superset of the chunk), so that
   * whatever a write commits is within the recorded ranges that delete and count go by.
   */
  progress(): BatchChanges {
    const row = this.#row
    row.updated_at = this.#clock.now()
    const { rows_read, rejected_count, bytes_read, updated_at } = row
    return { rows_read, rejected_count, bytes_read, updated_at, tags: JSON.stringify(this.#covered()) }
  }

  /** How many more collisions the report lists. */
  collisionRoom(): number {
    return MAX_COLLISIONS_LISTED - this.#collisions.length
  }

  /** A chunk written: its parts' counts and the collisions found (in file order); answers the row's changes. */
  written(parts: ReadonlyArray<{ attempted: number; written: number }>, found: CollisionEntry[]): BatchChanges {
    const row = this.#row
    for (const entry of found) {
      if (this.#collisions.length >= MAX_COLLISIONS_LISTED) break
      this.#collisions.push(entry)
    }
    for (const d of parts) {
      row.collision_count += d.attempted - d.written
      row.samples_stored += d.written
    }
    row.updated_at = this.#clock.now()
    return { samples_stored: row.samples_stored, collision_count: row.collision_count, updated_at: row.updated_at }
  }

  /** The whole file is read: totals, time range, coverage and the report as the parse leaves them. */
  parsed(summary: ParseSummary, bytesRead: number, trendSha256: string): void {
    const row = this.#row
    row.bytes_read = bytesRead
    if (summary.format !== null) row.format = summary.format
    const covered = this.#covered()
    for (const c of covered) {
      if (c.firstTs !== null && (row.first_ts === null || c.firstTs < row.first_ts)) row.first_ts = c.firstTs
      if (c.lastTs !== null && (row.last_ts === null || c.lastTs > row.last_ts)) row.last_ts = c.lastTs
    }
    row.tags = JSON.stringify(covered)
    const maxKept = this.#plan.options.maxRejections ?? 100
    const rejections = [...summary.rejections, ...this.#ownRejections].sort((a, b) => a.line - b.line).slice(0, maxKept)
    // A dry run's duplicates are those within a chunk (FLUSH_SAMPLES); an import adds the rest when it completes.
    const report = this.#report(summary.separator, summary.emptyCells, summary.sentinelCells, null, rejections)
    this.#finalReport = { ...report, valuesRead: summary.valuesRead, duplicatesInFile: this.#duplicatesInChunks }
    row.report = JSON.stringify(this.#finalReport)
    row.trend_sha256 = trendSha256
  }

  /** force=true: the staged samples replaced `count` stored ones (the first listed), over the earlier twin if any. */
  replaced(count: number, listed: StagedCollision[], forcedOver: string | null): void {
    const row = this.#row
    const report = this.#finalReport!
    row.replaced_count = count
    report.forcedOver = forcedOver
    report.collisions = listed.map((r) => ({
      instanceId: r.instance_id,
      tagKey: r.tag_key,
      ts: r.ts,
      resolution: 'replacedStored' as const,
      kept: { batchId: row.id, ...r.staged },
      discarded: { batchId: r.stored.batch_id, value: r.stored.value, text: r.stored.text, quality: r.stored.quality },
    }))
  }

  /** The batch is complete with `stored` samples in the database; answers the row's changes. */
  completed(stored: number): BatchChanges {
    const row = this.#row
    const report = this.#finalReport!
    // Every write counted the rows it inserted or updated: a sample that rewrote the batch's own row at the same
    // series and timestamp (a duplicate in an earlier chunk of the file) is one written but not one more stored.
    const written = row.samples_stored
    row.samples_stored = stored
    report.duplicatesInFile = this.#duplicatesInChunks + written - row.samples_stored
    row.report = JSON.stringify(report)
    row.status = 'complete'
    row.completed_at = row.updated_at = this.#clock.now()
    const { org_id: _o, id: _i, site_code: _s, created_at: _c, created_by: _b, ...changes } = row
    return changes
  }

  /** The state of a tag seen for the first time, remembered unless it is an unmapped one past the listed ones. */
  #tagState(tag: string, into: SampleBuffer): TagState {
    const m = this.#plan.mapping.get(tag)
    if (m === undefined) {
      if (this.#unmappedTagsListed >= MAX_UNMAPPED_TAGS_LISTED || tag.length > MAX_HISTORIAN_TAG_LENGTH) return this.#unlisted
      this.#unmappedTagsListed++
    }
    const state: TagState =
      m === undefined
        ? { coverage: null, rows: 0, pair: -1 }
        : {
            coverage: { historianTag: tag, instanceId: m.instanceId, tagKey: m.tagKey, unit: m.unit, scale: m.scale, samples: 0, firstTs: null, lastTs: null },
            rows: 0,
            pair: into.pairs.number(m.instanceId, m.tagKey),
          }
    this.#tags.set(tag, state)
    return state
  }

  #covered(): TagCoverage[] {
    return [...this.#tags.values()].flatMap((s) => (s.coverage === null ? [] : [s.coverage]))
  }

  #report(separator: string | null, emptyCells: number, sentinelCells: number, forcedOver: string | null, rejections: Rejection[] = []): BatchReport {
    const unmappedTags = [...this.#tags.entries()].filter(([, s]) => s.coverage === null).map(([tag, s]) => ({ tag, rows: s.rows }))
    return { separator, timezone: this.#plan.options.timezone, rejections, unmappedTags, emptyCells, sentinelCells, forcedOver, collisions: this.#collisions }
  }
}

function optionsRecord(options: ParseOptions): Record<string, unknown> {
  const { format, separator, decimal, timezone, dateOrder, sentinels, qualityScale, maxRejections } = options
  return { format, separator, decimal, timezone, dateOrder, sentinels, qualityScale, maxRejections }
}
