import { CELL_EMPTY, CELL_NUMBER, CELL_SENTINEL, CELL_TEXT } from './cells.ts'
import type { CellReader } from './cells.ts'
import type { FormatName, Quality, Rejection, Sample } from './types.ts'

const INITIAL_CAPACITY = 1024

/**
 * The samples of one batch as columns, reused from batch to batch: a file's samples cost no object each. (V8
 * allocates in the old generation straight away what a line of code creates once a young collection finds most of
 * that line's recent objects alive; a piece's samples, alive until handed over, did that: docs/benchmarks.md, sixth
 * pass.) Valid until the parse is resumed; `at` copies one out.
 */
export class SampleColumns {
  length = 0
  readonly tags: string[] = []
  ts = new Float64Array(INITIAL_CAPACITY)
  /** The number; meaningless where `texts` holds a text state. */
  values = new Float64Array(INITIAL_CAPACITY)
  /** A text state, or null where the sample is a number. */
  readonly texts: Array<string | null> = []
  readonly qualities: Quality[] = []
  /** 1-based line of the file where the sample's row starts. */
  lines = new Int32Array(INITIAL_CAPACITY)

  push(tag: string, ts: number, value: number, text: string | null, quality: Quality, line: number): void {
    const i = this.length
    if (i === this.ts.length) this.#grow()
    this.tags[i] = tag
    this.ts[i] = ts
    this.values[i] = value
    this.texts[i] = text
    this.qualities[i] = quality
    this.lines[i] = line
    this.length = i + 1
  }

  /** Empties the columns and keeps their capacity. */
  clear(): void {
    this.length = 0
  }

  /** Sample `i` as an object of its own. */
  at(i: number): Sample {
    const text = this.texts[i] ?? null
    return { tag: this.tags[i]!, ts: this.ts[i]!, value: text === null ? this.values[i]! : null, text, quality: this.qualities[i]!, line: this.lines[i]! }
  }

  #grow(): void {
    const capacity = this.ts.length * 2
    const ts = new Float64Array(capacity)
    ts.set(this.ts)
    this.ts = ts
    const values = new Float64Array(capacity)
    values.set(this.values)
    this.values = values
    const lines = new Int32Array(capacity)
    lines.set(this.lines)
    this.lines = lines
  }
}

/**
 * What one step of the stream produced. Rejections are complete for the rows of this batch. The samples are columns
 * the parse reuses: read them before asking for the next batch.
 */
export interface SampleBatch {
  format: FormatName
  samples: SampleColumns
  rejections: Rejection[]
  /** Data rows (header and blank lines excluded) consumed by this batch. */
  rowsRead: number
}

/** Collects what the rows of one batch produce; decoders write into it. */
export class BatchSink {
  readonly samples = new SampleColumns()
  rejections: Rejection[] = []
  rowsRead = 0
  /** What the accounting counts (types.ts ParseSummary.valuesRead): every value becomes exactly one sample, empty or sentinel cell, or rejection. */
  valuesRead = 0
  emptyCells = 0
  sentinelCells = 0

  reject(line: number, reason: string, column?: string): void {
    this.rejections.push(column === undefined ? { line, reason } : { line, reason, column })
  }

  /** Turns one value cell into a sample, a counted empty/sentinel cell, or a rejection. */
  cell(cells: CellReader, tag: string, ts: number, raw: string, quality: Quality, line: number, column?: string): void {
    const kind = cells.read(raw)
    if (kind === CELL_NUMBER) this.samples.push(tag, ts, cells.number, null, quality, line)
    else if (kind === CELL_TEXT) this.samples.push(tag, ts, 0, cells.text, quality, line)
    else if (kind === CELL_EMPTY) this.emptyCells++
    else if (kind === CELL_SENTINEL) this.sentinelCells++
    else this.reject(line, column === undefined ? cells.reason : `${column}: ${cells.reason}`, column)
  }

  /** Hands over the counts and rejections collected and starts counting again; the samples stay until `samples.clear()`. */
  drain(): { rejections: Rejection[]; rowsRead: number; valuesRead: number; emptyCells: number; sentinelCells: number } {
    const out = {
      rejections: this.rejections,
      rowsRead: this.rowsRead,
      valuesRead: this.valuesRead,
      emptyCells: this.emptyCells,
      sentinelCells: this.sentinelCells,
    }
    this.rejections = []
    this.rowsRead = 0
    this.valuesRead = 0
    this.emptyCells = 0
    this.sentinelCells = 0
    return out
  }
}
