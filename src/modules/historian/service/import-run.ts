import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import type { HistorianBatchesTable } from '../../../db/schema.ts'
import { DomainError } from '../../../errors/domain-error.ts'
import { NO_TRANSFER_METER, type TransferMeter, type TransferRun } from '../../../http/transfer-meter.ts'
import { recordAudit } from '../../audit/service.ts'
import { DuplicateBatch, fromParseError } from '../errors.ts'
import { parseStream } from '../parse/index.ts'
import { createImportStore, type ImportStore } from '../store/import-store.ts'
import {
  countStagedCollisions,
  countStoredOfBatch,
  findCompleteTwin,
  listBatchesReplacedBy,
  listStagedCollisions,
  mergeStaged,
  touchBatches,
  updateBatch,
} from '../store/queries.ts'
import { BatchRecord, MAX_COLLISIONS_LISTED, type ImportPlan } from './batch-record.ts'
import { WritePipeline } from './write-pipeline.ts'

/** The trend file as it streams in: its bytes, and the running hash and byte count of what was read. */
export interface TrendSource {
  chunks: AsyncIterable<Uint8Array>
  bytesRead(): number
  /** Hex SHA-256 of the whole file; valid once `chunks` has ended. */
  sha256(): string
}

/**
 * One import from the first byte of the trend file to the complete batch. Samples are written under a `running`
 * batch (invisible to reads) in transactions of FLUSH_SAMPLES (WritePipeline); the batch turns `complete` in one last
 * transaction that also checks for a duplicate and, with force, merges the staged samples. Any failure removes the
 * samples. The batch's counters and report are its record's (BatchRecord); the database is the store's (ImportStore).
 */
export class ImportRun {
  readonly #clock: Clock
  readonly #plan: ImportPlan
  readonly #record: BatchRecord
  readonly #store: ImportStore
  readonly #pipeline: WritePipeline
  /** The metrics' view of this import: rows and bytes as they are read, and its end. */
  readonly #metered: TransferRun

  constructor(deps: { handle: DatabaseHandle; clock: Clock; meter?: TransferMeter | undefined }, plan: ImportPlan) {
    this.#clock = deps.clock
    this.#plan = plan
    this.#record = new BatchRecord(plan, deps.clock)
    const scope = { orgId: plan.orgId, siteCode: plan.siteCode, batchId: this.#record.id }
    this.#store = createImportStore(deps.handle, plan.isForced ? 'staging' : 'samples', scope)
    this.#pipeline = new WritePipeline(this.#store, this.#record, plan.isDryRun)
    this.#metered = (deps.meter ?? NO_TRANSFER_METER).begin()
  }

  get batchId(): string {
    return this.#record.id
  }

  get isDryRun(): boolean {
    return this.#plan.isDryRun
  }

  /** Parses and writes the whole trend file under the running batch; on failure cleans up and rethrows. */
  async ingest(source: TrendSource): Promise<void> {
    try {
      if (!this.#plan.isDryRun) await this.#store.begin(this.#record.row)
      await this.#consume(source)
    } catch (err) {
      await this.abandon(err)
      throw err
    }
  }

  /** Makes the batch visible (or, for a dry run, just answers it); on failure cleans up and rethrows. */
  async finish(): Promise<HistorianBatchesTable> {
    if (this.#plan.isDryRun) {
      this.#metered.ended('complete')
      return this.#record.row
    }
    try {
      const row = await this.#complete()
      await this.#store.release()
      this.#metered.ended('complete')
      return row
    } catch (err) {
      await this.abandon(err)
      throw err
    }
  }

  async #consume(source: TrendSource): Promise<void> {
    const parse = parseStream(source.chunks, this.#plan.options)
    const pipeline = this.#pipeline
    let bytesCounted = 0
    try {
      for await (const batch of parse) {
        const bytesRead = source.bytesRead()
        this.#metered.advanced(batch.rowsRead, bytesRead - bytesCounted)
        bytesCounted = bytesRead
        this.#record.add(batch, bytesRead, pipeline.chunk)
        await pipeline.flushIfFull()
      }
      await pipeline.drain()
    } catch (err) {
      await pipeline.stop()
      throw fromParseError(err, 'trend_csv')
    }
    this.#metered.advanced(0, source.bytesRead() - bytesCounted)
    this.#record.parsed(parse.summary, source.bytesRead(), source.sha256())
  }

  async #complete(): Promise<HistorianBatchesTable> {
    const { orgId, siteCode, isForced, actor } = this.#plan
    const record = this.#record
    const id = record.id
    const files = record.files
    await this.#store.finish(files, async (trx) => {
      const twin = await findCompleteTwin(trx, orgId, siteCode, files.trendSha256, files.mappingSha256, id)
      if (twin !== undefined && !isForced) throw new DuplicateBatch(twin.id)
      if (isForced) {
        const count = await countStagedCollisions(trx, orgId, id)
        const listed = count === 0 ? [] : await listStagedCollisions(trx, orgId, id, MAX_COLLISIONS_LISTED)
        // The batches whose samples this one takes over changed too: their rows are marked (updated_at), so that the
        // fleet link records them again and uploads their samples anew (ARCHITECTURE.md § Fleet link), before this one.
        const shrunk = count === 0 ? [] : await listBatchesReplacedBy(trx, orgId, id)
        await mergeStaged(trx, orgId, id)
        await touchBatches(trx, orgId, shrunk, this.#clock.now())
        record.replaced(count, listed, twin?.id ?? null)
      }
      await updateBatch(trx, orgId, id, record.completed(await countStoredOfBatch(trx, orgId, id, record.where())))
      const row = record.row
      await recordAudit(trx, this.#clock, orgId, actor, {
        action: 'historian.batch.imported',
        target: id,
        detail: { site: siteCode, format: row.format, samples: row.samples_stored, rejected: row.rejected_count, isForced },
      })
    })
    return record.row
  }

  /**
   * Removes what the batch wrote. A refused import (a problem answered to the client) leaves no trace; one that
   * stopped for another reason (connection closed, database error) stays as `failed` with a generic reason.
   */
  async abandon(err: unknown): Promise<void> {
    this.#metered.ended('failed')
    await this.#store.fail(err instanceof DomainError, this.#record.where(), () => ({
      error: 'The import stopped before it completed (the upload was interrupted or the server failed); nothing of it was kept.',
      updated_at: this.#clock.now(),
    }))
  }
}
