import { CsvRows, CsvTokenizer, copyRow, piecesOf } from './csv.ts'
import type { CsvRow } from './csv.ts'
import { DETECTION_ROWS, detectFormat } from './detect.ts'
import { HistorianHeaderInvalid } from './errors.ts'
import type { RowDecoder } from './formats/adapter.ts'
import { formatByName } from './formats/registry.ts'
import { checkOptions, settleOptions } from './options.ts'
import type { ParseOptions } from './options.ts'
import { QualityReader } from './quality.ts'
import { BatchSink, type SampleBatch } from './sink.ts'
import { TimeReader } from './time-reader.ts'
import type { ByteSource, ParseSummary, Sample } from './types.ts'

/**
 * Parses a historian export as a stream, in memory bounded by the input chunk size.
 *
 * Iterate the result once: each piece of an input chunk (32 KiB) gives at most one SampleBatch
 * (samples plus the rejections of its rows; the sample columns are reused, so read them before the next step). `summary` holds running totals, the chosen format and the first
 * `maxRejections` rejections; it is final when iteration ends.
 *
 * Throws (synchronously) TypeError for a bad option. Iteration rejects with
 * HistorianHeaderInvalid (header or preamble wrong, empty file), HistorianFormatUndetected
 * (`auto` found no layout) or HistorianCsvInvalid (UTF-16, unterminated quote). A bad data
 * row never throws: it becomes a Rejection.
 */
export function parseStream(source: ByteSource, options: ParseOptions): HistorianParse {
  checkOptions(options)
  return new HistorianParse(source, options)
}

/** Reads a whole (small) export into memory: for tests, previews and mapping checks. */
export async function parseAll(source: ByteSource, options: ParseOptions): Promise<{ samples: Sample[]; summary: ParseSummary }> {
  const run = parseStream(source, options)
  const samples: Sample[] = []
  for await (const batch of run) for (let i = 0; i < batch.samples.length; i++) samples.push(batch.samples.at(i))
  return { samples, summary: run.summary }
}

/** One parse of one export: iterate it once for batches; read `summary` for totals and the format. */
export class HistorianParse implements AsyncIterable<SampleBatch> {
  readonly summary: ParseSummary = {
    format: null,
    separator: null,
    rowsRead: 0,
    valuesRead: 0,
    samples: 0,
    rejectedCount: 0,
    rejections: [],
    emptyCells: 0,
    sentinelCells: 0,
  }
  readonly #source: ByteSource
  readonly #options: ParseOptions
  #isStarted = false

  constructor(source: ByteSource, options: ParseOptions) {
    this.#source = source
    this.#options = options
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SampleBatch> {
    if (this.#isStarted) throw new Error('A HistorianParse can be iterated only once.')
    this.#isStarted = true
    const tokenizer = new CsvTokenizer({ separator: this.#options.separator, maxRowChars: this.#options.maxRowChars })
    const step = new Step(this.#options, this.summary, tokenizer)
    // Rows and samples live in objects and columns reused from piece to piece (CsvRows, SampleColumns).
    const rows = new CsvRows()
    for await (const chunk of this.#source) {
      // From bytes to samples a piece (32 KiB) at a time, not a whole input chunk: the strings of a piece's cells are
      // what is alive at once, and they die young (docs/benchmarks.md, fifth and sixth passes).
      for (const piece of piecesOf(chunk)) {
        tokenizer.push(piece, rows)
        const batch = step.take(rows, false)
        rows.clear()
        if (batch !== undefined) yield batch
      }
    }
    tokenizer.end(rows)
    const batch = step.take(rows, true)
    if (batch !== undefined) yield batch
  }
}

/** Holds rows back until the layout is known, then feeds the decoder and keeps the totals. */
class Step {
  readonly #options: ParseOptions
  readonly #summary: ParseSummary
  readonly #tokenizer: CsvTokenizer
  readonly #sink = new BatchSink()
  #decoder: RowDecoder | undefined
  #held: CsvRow[] = []
  #maxRejections = 100

  constructor(options: ParseOptions, summary: ParseSummary, tokenizer: CsvTokenizer) {
    this.#options = options
    this.#summary = summary
    this.#tokenizer = tokenizer
  }

  take(rows: CsvRows | CsvRow[], isFinal: boolean): SampleBatch | undefined {
    const sink = this.#sink
    sink.samples.clear()
    let decoder = this.#decoder
    if (decoder === undefined) {
      for (let i = 0; i < rows.length; i++) {
        const row = rows.at(i)!
        if (!isBlank(row)) this.#held.push(copyRow(row))
      }
      const enough = this.#options.format !== 'auto' || this.#held.length >= DETECTION_ROWS
      if ((!enough || this.#held.length === 0) && !isFinal) return undefined
      if (this.#held.length === 0) throw new HistorianHeaderInvalid('The file is empty.', 1)
      decoder = this.#start()
      rows = this.#held
      this.#held = []
    }
    for (let i = 0; i < rows.length; i++) {
      const row = rows.at(i)!
      if (!isBlank(row)) decoder.decode(row, sink)
    }
    if (isFinal) decoder.finish()
    return this.#emit()
  }

  #start(): RowDecoder {
    const format = this.#options.format === 'auto' ? detectFormat(this.#held) : this.#options.format
    const separator = this.#tokenizer.separator ?? ','
    const settled = settleOptions(this.#options, format, separator)
    if (settled.decimal === ',' && separator === ',') {
      throw new HistorianHeaderInvalid("The file is comma-separated, so decimal ',' cannot be read; check the decimal option.", 1)
    }
    this.#maxRejections = settled.maxRejections
    this.#summary.format = format
    this.#summary.separator = separator
    this.#decoder = formatByName(format).createDecoder({
      options: settled,
      times: new TimeReader(settled.dateOrder, settled.timezone),
      qualities: new QualityReader(settled.qualityScale),
    })
    return this.#decoder
  }

  #emit(): SampleBatch | undefined {
    const out = this.#sink.drain()
    const samples = this.#sink.samples
    const summary = this.#summary
    summary.rowsRead += out.rowsRead
    summary.valuesRead += out.valuesRead
    summary.samples += samples.length
    summary.rejectedCount += out.rejections.length
    summary.emptyCells += out.emptyCells
    summary.sentinelCells += out.sentinelCells
    for (const r of out.rejections) {
      if (summary.rejections.length >= this.#maxRejections) break
      summary.rejections.push(r)
    }
    if (out.rowsRead === 0 && samples.length === 0 && out.rejections.length === 0) return undefined
    return { format: summary.format!, samples, rejections: out.rejections, rowsRead: out.rowsRead }
  }
}

/** A row of empty fields only (`;;;;`), as spreadsheet exports leave at the end. */
function isBlank(row: CsvRow): boolean {
  const f = row.fields
  if (f[0] !== '') return false
  for (let i = 1; i < f.length; i++) if (f[i] !== '') return false
  return true
}
