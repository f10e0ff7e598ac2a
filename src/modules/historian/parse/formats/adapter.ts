import type { CsvRow } from '../csv.ts'
import type { SettledOptions } from '../options.ts'
import type { QualityReader } from '../quality.ts'
import type { BatchSink } from '../sink.ts'
import type { TimeReader } from '../time-reader.ts'
import type { FormatName } from '../types.ts'

export interface DecodeContext {
  options: SettledOptions
  times: TimeReader
  qualities: QualityReader
}

/** Turns the rows of one file, header first, into samples and rejections. */
export interface RowDecoder {
  /** Consumes one non-blank row; throws HistorianHeaderInvalid only for a header problem. */
  decode(row: CsvRow, sink: BatchSink): void
  /** Called after the last row; throws when the file ended before a usable header. */
  finish(): void
}

export interface FormatAdapter {
  readonly name: FormatName
  /** The layout as shown to a user choosing a format. */
  readonly signature: string
  /** Whether the first non-blank rows of a file look like this layout (for `format: auto`). */
  looksLike(rows: readonly CsvRow[]): boolean
  createDecoder(ctx: DecodeContext): RowDecoder
}
