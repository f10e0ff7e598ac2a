import type { ImportStore, Lane, PartCollision } from '../store/import-store.ts'
import { SampleBuffer, SeriesPairs } from '../store/sample-buffer.ts'
import type { BatchRecord } from './batch-record.ts'
import type { CollisionEntry } from './batch-view.ts'

/** Samples per write transaction: large enough that commits cost little, small enough to bound memory. */
export const FLUSH_SAMPLES = 50_000

/** A collision found by one lane, with its row's index in the whole chunk (the report lists them in file order). */
interface FoundCollision {
  rank: number
  entry: CollisionEntry
}

/**
 * How an import's samples reach the store: the chunk being parsed is written every FLUSH_SAMPLES samples, split by
 * series into one part per lane (ImportStore.lanes), each part in its own transaction. On PostgreSQL the server
 * inserts a chunk while the next one is parsed and prepared. The batch's counters are the record's (BatchRecord):
 * this tells it what each write did. A dry run writes nothing and only counts.
 */
export class WritePipeline {
  readonly #store: ImportStore
  readonly #record: BatchRecord
  readonly #isDryRun: boolean
  readonly #pairs = new SeriesPairs()
  /** The chunk being parsed (BatchRecord.add fills it); at each flush it is copied into the lanes' parts and filled again. */
  readonly chunk = new SampleBuffer(this.#pairs)
  /**
   * The parts of a chunk, a buffer per lane (two sets, used in turn: one is being written while the next chunk is
   * copied into the other).
   */
  readonly #partSets = [[new SampleBuffer(this.#pairs)], [new SampleBuffer(this.#pairs)]]
  /** PostgreSQL: the write of the previous chunk, still running while the next one is parsed. */
  #pending: Promise<void> | undefined

  constructor(store: ImportStore, record: BatchRecord, isDryRun: boolean) {
    this.#store = store
    this.#record = record
    this.#isDryRun = isDryRun
  }

  /** Writes the chunk once it is full. */
  async flushIfFull(): Promise<void> {
    if (this.chunk.length >= FLUSH_SAMPLES) await this.#flush()
  }

  /** Writes the rest of the chunk and waits for every write. */
  async drain(): Promise<void> {
    if (this.chunk.length > 0) await this.#flush()
    await this.#settle()
  }

  /** After a failure: waits for the write in flight, whatever its outcome (nothing may run on the import's connection once it is being cleaned up). */
  async stop(): Promise<void> {
    await this.#pending?.catch(() => {})
    this.#pending = undefined
  }

  async #flush(): Promise<void> {
    const chunk = this.chunk
    if (this.#isDryRun) {
      const duplicates = chunk.dedupe()
      this.#record.chunkCounted(duplicates, chunk.length)
      chunk.clear()
      return
    }
    const lanes = await this.#store.lanes(() => this.#settle())
    // Deduplicated whole (a lane's rows keep their index in the chunk), then split by series: one part per lane.
    this.#record.chunkCounted(chunk.dedupe())
    const set = this.#partSets.shift()!
    this.#partSets.push(set)
    while (set.length < lanes.length) set.push(new SampleBuffer(this.#pairs))
    const parts = set.slice(0, lanes.length)
    chunk.splitInto(parts)
    chunk.clear()
    // The previous chunk is still being inserted (PostgreSQL; SQLite's driver is synchronous: nothing to overlap):
    // this one's CPU work is done meanwhile.
    if (this.#pending !== undefined) this.#store.prepare(lanes, parts)
    await this.#settle()
    const write = this.#write(lanes, parts)
    if (!this.#store.overlapsWrites) return write
    write.catch(() => {})
    this.#pending = write
  }

  async #settle(): Promise<void> {
    const pending = this.#pending
    this.#pending = undefined
    await pending
  }

  /** A chunk's parts, one a lane; then the batch row records what they wrote. */
  async #write(lanes: Lane[], parts: SampleBuffer[]): Promise<void> {
    const done = await this.#store.write(lanes, this.#record.progress(), parts, this.#record.collisionRoom())
    const found = done.flatMap((d, i) => d.collisions.map((c) => this.#found(parts[i]!, c))).sort((a, b) => a.rank - b.rank)
    await this.#store.update(
      this.#record.written(
        done,
        found.map((f) => f.entry),
      ),
    )
  }

  /** A collision of a part as the report lists it: the stored value kept, this batch's discarded. */
  #found(part: SampleBuffer, c: PartCollision): FoundCollision {
    const i = c.index
    const { instanceId, tagKey } = this.#pairs.list[part.pair[i]!]!
    return {
      rank: part.origin![i]!,
      entry: {
        instanceId,
        tagKey,
        ts: c.ts,
        resolution: 'keptStored',
        kept: { batchId: c.stored.batch_id, value: c.stored.value, text: c.stored.text, quality: c.stored.quality },
        discarded: { batchId: this.#record.id, value: part.value(i), text: part.text(i), quality: part.qualities[i]! },
      },
    }
  }
}
