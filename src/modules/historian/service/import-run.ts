import { sql } from 'kysely'
import type { Actor } from '../../../identity.ts'
import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import type { HistorianBatchesTable } from '../../../db/schema.ts'
import { lockUntilCommit } from '../../../db/transaction-lock.ts'
import { DomainError } from '../../../errors/domain-error.ts'
import { newId, type OrgId } from '../../../ids.ts'
import { recordAudit } from '../../audit/service.ts'
import { DuplicateBatch, fromParseError } from '../errors.ts'
import { parseStream } from '../parse/index.ts'
import type { ParseOptions, Quality, Rejection, TagMapping } from '../parse/index.ts'
import { countStagedCollisions, countStoredOfBatch, deleteBatchRow, deleteSamplesOfBatch, findCollisions, findCompleteTwin, insertBatch, listStagedCollisions, mergeStaged, updateBatch, type BatchWhere } from '../store.ts'
import type { Db } from '../../../db/schema.ts'
import type { BatchReport, CollisionEntry, TagCoverage } from './batch-view.ts'
import { SampleBuffer, SeriesPairs } from './sample-buffer.ts'
import { createSampleWriter, type SampleWriter } from './sample-writer.ts'
import { openExtraConnection, openImportSession, type ExtraConnection, type ImportSession } from './session.ts'

/** Samples per write transaction: large enough that commits cost little, small enough to bound memory. */
export const FLUSH_SAMPLES = 50_000

/** Collisions listed in the batch report (all are counted); the report pages through these. */
export const MAX_COLLISIONS_LISTED = 1000
/** Keys looked up per statement when listing collisions (2 parameters each; SQLite allows 32 766). */
const COLLISION_KEYS_PER_QUERY = 5000

/**
 * The unmapped tags a batch lists and remembers, the first in file order. Rows of further unmapped tags are rejected
 * and counted like the others, but their names are not kept: a file of distinct names (say a `wide` export read as
 * `long`, each value taken for a tag) must not grow the import's memory with every row.
 */
export const MAX_UNMAPPED_TAGS_LISTED = 1000

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

/** The trend file as it streams in: its bytes, and the running hash and byte count of what was read. */
export interface TrendSource {
  chunks: AsyncIterable<Uint8Array>
  bytesRead(): number
  /** Hex SHA-256 of the whole file; valid once `chunks` has ended. */
  sha256(): string
}

interface TagState { coverage: TagCoverage | null; rows: number; pair: number }

/** A collision found by one lane, with its row's index in the whole chunk (the report lists them in file order). */
interface FoundCollision { rank: number; entry: CollisionEntry }

/** Where a part of each chunk is written: a connection and the writer that knows its series. */
interface Lane { db: Db; writer: SampleWriter }

/**
 * One import from the first byte of the trend file to the complete batch. Samples are written under a `running`
 * batch (invisible to reads) in transactions of FLUSH_SAMPLES; the batch turns `complete` in one last transaction
 * that also checks for a duplicate and, with force, merges the staged samples. Any failure removes the samples.
 */
export class ImportRun {
  readonly #deps: { handle: DatabaseHandle; clock: Clock }
  readonly #plan: ImportPlan
  readonly #row: HistorianBatchesTable
  readonly #tags = new Map<string, TagState>()
  #unmappedTagsListed = 0
  /** The state of every unmapped tag past MAX_UNMAPPED_TAGS_LISTED: rows counted, the names not kept. */
  readonly #unlisted: TagState = { coverage: null, rows: 0, pair: -1 }
  readonly #pairs = new SeriesPairs()
  /** The chunk being parsed; at each flush it is copied into the lanes' parts and filled again. */
  readonly #buffer = new SampleBuffer(this.#pairs)
  /**
   * The parts of a chunk, a buffer per lane (two sets, used in turn: one is being written while the next chunk is
   * copied into the other).
   */
  readonly #partSets = [[new SampleBuffer(this.#pairs)], [new SampleBuffer(this.#pairs)]]
  /** PostgreSQL: the write of the previous chunk, still running while the next one is parsed. */
  #pending: Promise<void> | undefined
  readonly #ownRejections: Rejection[] = []
  readonly #collisions: CollisionEntry[] = []
  /** Samples dropped because a later row of their chunk has the same series and timestamp. */
  #duplicatesInChunks = 0
  /** The report as the parse left it (finishTotals); completing adds to it. */
  #finalReport: BatchReport | undefined
  #session: ImportSession | undefined
  #writer: SampleWriter | undefined
  /**
   * PostgreSQL: a second connection with its own writer, while the pool can spare one. While it is there every chunk
   * is written in two parts at once, the even-numbered series on the session's connection and the odd-numbered ones
   * on this one: no key is written by both, and one chunk's parts are over before the next chunk's begin.
   */
  #extra: ExtraConnection | undefined
  #extraWriter: SampleWriter | undefined
  #hasBatchRow = false

  constructor(deps: { handle: DatabaseHandle; clock: Clock }, plan: ImportPlan) {
    this.#deps = deps
    this.#plan = plan
    const now = deps.clock.now()
    this.#row = {
      org_id: plan.orgId, site_code: plan.siteCode, id: newId('bat', now), format: plan.options.format, status: 'running',
      rows_read: 0, samples_stored: 0, rejected_count: 0, collision_count: 0, replaced_count: 0, bytes_read: 0, bytes_total: plan.bytesTotal,
      first_ts: null, last_ts: null, tags: '[]', report: JSON.stringify(this.#report(null, 0, 0, null)), options: JSON.stringify(optionsRecord(plan.options)),
      trend_sha256: '', mapping_sha256: plan.mappingSha256, trend_name: plan.trendName, is_forced: plan.isForced ? 1 : 0, error: null,
      created_by: `${plan.actor.kind}:${plan.actor.subject}`, created_at: now, updated_at: now, completed_at: null,
    }
  }

  get batchId(): string {
    return this.#row.id
  }

  get isDryRun(): boolean {
    return this.#plan.isDryRun
  }

  /** Parses and writes the whole trend file under the running batch; on failure cleans up and rethrows. */
  async ingest(source: TrendSource): Promise<void> {
    try {
      if (!this.#plan.isDryRun) await this.#start()
      await this.#consume(source)
      this.#row.trend_sha256 = source.sha256()
    } catch (err) {
      await this.abandon(err)
      throw err
    }
  }

  /** Makes the batch visible (or, for a dry run, just answers it); on failure cleans up and rethrows. */
  async finish(): Promise<HistorianBatchesTable> {
    if (this.#plan.isDryRun) return this.#row
    try {
      const row = await this.#complete()
      await this.#release()
      return row
    } catch (err) {
      await this.abandon(err)
      throw err
    }
  }

  async #start(): Promise<void> {
    const { handle } = this.#deps
    // Lock first, then insert: a recovering process never sees this batch running without its lock.
    this.#session = await openImportSession(handle, this.#row.id)
    await insertBatch(this.#session.db, this.#row)
    this.#hasBatchRow = true
    this.#writer = this.#newWriter()
    this.#extra = openExtraConnection(handle)
  }

  #newWriter(): SampleWriter {
    return createSampleWriter(this.#deps.handle.dialect, this.#plan.isForced ? 'staging' : 'samples', { orgId: this.#plan.orgId, siteCode: this.#plan.siteCode, batchId: this.#row.id })
  }

  /** Ends the import's connections (the extra one first: its writes are over by now). */
  async #release(): Promise<void> {
    const extra = this.#extra
    this.#extra = undefined
    await extra?.release()
    await this.#session?.release()
  }

  async #consume(source: TrendSource): Promise<void> {
    const parse = parseStream(source.chunks, this.#plan.options)
    const row = this.#row
    const maxKept = this.#plan.options.maxRejections ?? 100
    try {
      for await (const batch of parse) {
        row.format = batch.format
        const samples = batch.samples
        for (let i = 0; i < samples.length; i++) {
          const tag = samples.tags[i]!
          const state = this.#tags.get(tag) ?? this.#tagState(tag)
          const c = state.coverage
          if (c === null) {
            state.rows++
            row.rejected_count++
            if (this.#ownRejections.length < maxKept) this.#ownRejections.push({ line: samples.lines[i]!, reason: `historian tag '${tag}' is not in mapping_csv` })
            continue
          }
          const ts = samples.ts[i]!
          c.samples++
          if (c.firstTs === null || ts < c.firstTs) c.firstTs = ts
          if (c.lastTs === null || ts > c.lastTs) c.lastTs = ts
          // Mapping `scale` multiplies numbers only; a text state is kept as it is.
          const text = samples.texts[i] ?? null
          this.#buffer.push(state.pair, ts, text === null ? samples.values[i]! * c.scale : null, text, QUALITY_CODE[samples.qualities[i]!])
        }
        row.rows_read += batch.rowsRead
        row.rejected_count += batch.rejections.length
        row.bytes_read = source.bytesRead()
        if (this.#buffer.length >= FLUSH_SAMPLES) await this.#flush()
      }
      if (this.#buffer.length > 0) await this.#flush()
      await this.#settle()
    } catch (err) {
      // Nothing may run on the import's connection once it is being cleaned up.
      await this.#pending?.catch(() => {})
      this.#pending = undefined
      throw fromParseError(err, 'trend_csv')
    }
    row.bytes_read = source.bytesRead()
    this.#finishTotals(parse.summary)
  }

  async #flush(): Promise<void> {
    const buffer = this.#buffer
    if (this.#plan.isDryRun) {
      this.#duplicatesInChunks += buffer.dedupe()
      this.#row.samples_stored += buffer.length
      buffer.clear()
      return
    }
    const lanes = await this.#lanes()
    // Deduplicated whole (a lane's rows keep their index in the chunk), then split by series: one part per lane.
    this.#duplicatesInChunks += buffer.dedupe()
    const set = this.#partSets.shift()!
    this.#partSets.push(set)
    while (set.length < lanes.length) set.push(new SampleBuffer(this.#pairs))
    const parts = set.slice(0, lanes.length)
    buffer.splitInto(parts)
    buffer.clear()
    // On PostgreSQL the server inserts the previous chunk while this one is parsed and prepared (SQLite's driver is
    // synchronous: nothing to overlap).
    if (this.#pending !== undefined) lanes.forEach((lane, i) => lane.writer.prepare(parts[i]!))
    await this.#settle()
    const write = this.#write(lanes, parts)
    if (this.#deps.handle.dialect !== 'postgres') return write
    write.catch(() => {})
    this.#pending = write
  }

  /**
   * The lanes of the next write: the session's connection, and the second connection while it is there. That one is
   * asked for while the pool has one to spare, and given back (once the write in flight is over) as soon as anyone
   * waits for a connection: requests come before import speed.
   */
  async #lanes(): Promise<Lane[]> {
    const { handle } = this.#deps
    const lanes: Lane[] = [{ db: this.#session!.db, writer: this.#writer! }]
    this.#extra ??= openExtraConnection(handle)
    const extra = this.#extra
    if (extra?.db === undefined) return lanes
    if (handle.spareConnections() >= 0) return [...lanes, { db: extra.db, writer: (this.#extraWriter ??= this.#newWriter()) }]
    await this.#settle()
    this.#extra = undefined
    await extra.release()
    return lanes
  }

  async #settle(): Promise<void> {
    const pending = this.#pending
    this.#pending = undefined
    await pending
  }

  /**
   * A chunk's parts, each in its own transaction on its own lane. First the batch row records the coverage so far
   * (a superset of the chunk): whatever any part commits is within the recorded ranges that delete and count go by,
   * and only the session's connection ever writes them, in order. A failing part fails the chunk once the others are
   * over too (committed or rolled back), so the clean-up that follows runs when nothing of the batch is being written
   * any more.
   */
  async #write(lanes: Lane[], parts: SampleBuffer[]): Promise<void> {
    const row = this.#row
    const db = this.#session!.db
    const { orgId } = this.#plan
    row.updated_at = this.#deps.clock.now()
    await updateBatch(db, orgId, row.id, { rows_read: row.rows_read, rejected_count: row.rejected_count, bytes_read: row.bytes_read, updated_at: row.updated_at, tags: JSON.stringify(this.#covered()) })
    const results = await Promise.allSettled(lanes.map(({ db: on, writer }, i) => on.transaction().execute(async (trx) => {
      const part = parts[i]!
      const { attempted, written } = await writer.write(trx, part)
      const found = written < attempted ? await this.#listCollisions(trx, writer, part, attempted - written) : []
      return { attempted, written, found }
    })))
    const failed = results.find((r) => r.status === 'rejected')
    if (failed !== undefined) throw failed.reason
    const done = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
    this.#keepCollisions(done.flatMap((d) => d.found).sort((a, b) => a.rank - b.rank))
    for (const d of done) {
      row.collision_count += d.attempted - d.written
      row.samples_stored += d.written
    }
    row.updated_at = this.#deps.clock.now()
    await updateBatch(db, orgId, row.id, { samples_stored: row.samples_stored, collision_count: row.collision_count, updated_at: row.updated_at })
  }

  #keepCollisions(found: FoundCollision[]): void {
    for (const f of found) {
      if (this.#collisions.length >= MAX_COLLISIONS_LISTED) return
      this.#collisions.push(f.entry)
    }
  }

  /**
   * Without force: which samples of the buffer met another batch's value (kept), in the buffer's order, up to what
   * the report still has room for (MAX_COLLISIONS_LISTED).
   */
  async #listCollisions(db: Db, writer: SampleWriter, buffer: SampleBuffer, count: number): Promise<FoundCollision[]> {
    const { orgId } = this.#plan
    const room = MAX_COLLISIONS_LISTED - this.#collisions.length
    const list: FoundCollision[] = []
    let found = 0
    for (let start = 0; start < buffer.length && found < count && list.length < room; start += COLLISION_KEYS_PER_QUERY) {
      const end = Math.min(buffer.length, start + COLLISION_KEYS_PER_QUERY)
      const index = new Map<string, number>()
      const keys = []
      for (let i = start; i < end; i++) {
        const seriesId = writer.seriesId(buffer.pair[i]!)
        index.set(`${seriesId}\u0000${buffer.ts[i]}`, i)
        keys.push({ seriesId, ts: buffer.ts[i]! })
      }
      const rows = await findCollisions(db, orgId, this.#row.id, keys)
      rows.sort((a, b) => index.get(`${a.series_id}\u0000${a.ts}`)! - index.get(`${b.series_id}\u0000${b.ts}`)!)
      for (const r of rows) {
        found++
        if (list.length >= room) break
        const i = index.get(`${r.series_id}\u0000${r.ts}`)!
        const { instanceId, tagKey } = this.#pairs.list[buffer.pair[i]!]!
        list.push({ rank: buffer.origin![i]!, entry: {
          instanceId, tagKey, ts: r.ts, resolution: 'keptStored',
          kept: { batchId: r.stored.batch_id, value: r.stored.value, text: r.stored.text, quality: r.stored.quality },
          discarded: { batchId: this.#row.id, value: buffer.value(i), text: buffer.text(i), quality: buffer.qualities[i]! },
        } })
      }
    }
    return list
  }

  #finishTotals(summary: { separator: string | null; rejections: Rejection[]; valuesRead: number; emptyCells: number; sentinelCells: number; format: string | null }): void {
    const row = this.#row
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
    this.#finalReport = { ...this.#report(summary.separator, summary.emptyCells, summary.sentinelCells, null, rejections), valuesRead: summary.valuesRead, duplicatesInFile: this.#duplicatesInChunks }
    row.report = JSON.stringify(this.#finalReport)
  }

  /** The state of a tag seen for the first time, remembered unless it is an unmapped one past the listed ones. */
  #tagState(tag: string): TagState {
    const m = this.#plan.mapping.get(tag)
    if (m === undefined) {
      if (this.#unmappedTagsListed >= MAX_UNMAPPED_TAGS_LISTED) return this.#unlisted
      this.#unmappedTagsListed++
    }
    const state: TagState = {
      coverage: m === undefined ? null : { historianTag: tag, instanceId: m.instanceId, tagKey: m.tagKey, unit: m.unit, scale: m.scale, samples: 0, firstTs: null, lastTs: null },
      rows: 0, pair: m === undefined ? -1 : this.#pairs.number(m.instanceId, m.tagKey),
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

  async #complete(): Promise<HistorianBatchesTable> {
    const { handle, clock } = this.#deps
    const { orgId, siteCode, isForced, actor } = this.#plan
    const row = this.#row
    await this.#session!.db.transaction().execute(async (trx) => {
      // A forced merge of millions of rows may run longer than the pool's per-statement timeout.
      if (handle.dialect === 'postgres') await sql`set local statement_timeout = 0`.execute(trx)
      // Uploads of the same two files complete one after another, so the second sees the first as its twin.
      await lockUntilCommit(trx, handle.dialect, `historian ${orgId} ${siteCode} ${row.trend_sha256} ${row.mapping_sha256}`)
      const twin = await findCompleteTwin(trx, orgId, siteCode, row.trend_sha256, row.mapping_sha256, row.id)
      if (twin !== undefined && !isForced) throw new DuplicateBatch(twin.id)
      const report = this.#finalReport!
      if (isForced) {
        row.replaced_count = await countStagedCollisions(trx, orgId, row.id)
        const replaced = row.replaced_count === 0 ? [] : await listStagedCollisions(trx, orgId, row.id, MAX_COLLISIONS_LISTED)
        await mergeStaged(trx, orgId, row.id)
        report.forcedOver = twin?.id ?? null
        report.collisions = replaced.map((r) => ({
          instanceId: r.instance_id, tagKey: r.tag_key, ts: r.ts, resolution: 'replacedStored' as const,
          kept: { batchId: row.id, ...r.staged },
          discarded: { batchId: r.stored.batch_id, value: r.stored.value, text: r.stored.text, quality: r.stored.quality },
        }))
      }
      // Every write counted the rows it inserted or updated: a sample that rewrote the batch's own row at the same
      // series and timestamp (a duplicate in an earlier chunk of the file) is one written but not one more stored.
      const written = row.samples_stored
      row.samples_stored = await countStoredOfBatch(trx, orgId, row.id, { siteCode, coverage: this.#covered() })
      report.duplicatesInFile = this.#duplicatesInChunks + written - row.samples_stored
      row.report = JSON.stringify(report)
      row.status = 'complete'
      row.completed_at = row.updated_at = clock.now()
      const { org_id: _o, id: _i, site_code: _s, created_at: _c, created_by: _b, ...changes } = row
      await updateBatch(trx, orgId, row.id, changes)
      await recordAudit(trx, clock, orgId, actor, {
        action: 'historian.batch.imported', target: row.id,
        detail: { site: siteCode, format: row.format, samples: row.samples_stored, rejected: row.rejected_count, isForced },
      })
    })
    return row
  }

  /**
   * Removes what the batch wrote. A refused import (a problem answered to the client) leaves no trace; one that
   * stopped for another reason (connection closed, database error) stays as `failed` with a generic reason.
   */
  async abandon(err: unknown): Promise<void> {
    if (!this.#hasBatchRow) {
      await this.#release()
      return
    }
    this.#hasBatchRow = false
    const { handle, clock } = this.#deps
    const { orgId } = this.#plan
    const db = this.#session?.db ?? handle.db
    const refused = err instanceof DomainError
    await db.transaction().execute(async (trx) => {
      if (refused) {
        await deleteSamplesOfBatch(trx, orgId, this.#row.id, { siteCode: this.#plan.siteCode, coverage: this.#covered() })
        await deleteBatchRow(trx, orgId, this.#row.id)
      } else await failBatch(trx, orgId, this.#row.id, { siteCode: this.#plan.siteCode, coverage: this.#covered() }, {
        error: 'The import stopped before it completed (the upload was interrupted or the server failed); nothing of it was kept.', updated_at: clock.now(),
      })
    }).catch(() => {
      // The start-up recovery (service.recoverInterrupted) removes what is left.
    })
    await this.#release()
  }
}

/**
 * Marks a batch `failed` once its samples are removed. Its `samples_stored` is then counted from what the database
 * holds of it (0), not left at the running total of its writes: a failed batch keeps nothing and says so.
 */
export async function failBatch(trx: Db, orgId: OrgId, batchId: string, where: BatchWhere, changes: { error: string; updated_at: number }): Promise<void> {
  await deleteSamplesOfBatch(trx, orgId, batchId, where)
  const left = await countStoredOfBatch(trx, orgId, batchId, where)
  await updateBatch(trx, orgId, batchId, { status: 'failed', samples_stored: left, ...changes })
}

function optionsRecord(options: ParseOptions): Record<string, unknown> {
  const { format, separator, decimal, timezone, dateOrder, sentinels, qualityScale, maxRejections } = options
  return { format, separator, decimal, timezone, dateOrder, sentinels, qualityScale, maxRejections }
}
