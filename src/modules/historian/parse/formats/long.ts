import { CellReader } from '../cells.ts'
import type { CsvRow } from '../csv.ts'
import { HistorianHeaderInvalid } from '../errors.ts'
import { findColumn, requireColumns } from '../header.ts'
import type { BatchSink } from '../sink.ts'
import type { DecodeContext, FormatAdapter, RowDecoder } from './adapter.ts'
import { decodeTallRow } from './tall-row.ts'
import type { TallColumns, TallReaders } from './tall-row.ts'

const COLUMNS = {
  time: ['timestamp', 'time', 'datetime'],
  tag: ['tag', 'tagname', 'name'],
  value: ['value'],
}
const QUALITY = ['quality']

/**
 * `timestamp,tag,value[,quality]`, one sample a row, header required. Names match any case
 * and any order; extra columns (Hurence's `dataUPtag1..4`) are ignored. Quality: text, or a
 * number on `qualityScale` (percent by default: Proficy/iFIX raw data writes 100.0/0.0).
 */
export const longFormat: FormatAdapter = {
  name: 'long',
  signature: 'long: timestamp|time|datetime, tag|tagname|name, value[, quality], in any order',
  looksLike(rows) {
    const header = rows[0]?.fields ?? []
    return Object.values(COLUMNS).every((aliases) => findColumn(header, aliases) !== -1)
  },
  createDecoder: (ctx) => new LongDecoder(ctx),
}

class LongDecoder implements RowDecoder {
  readonly #ctx: DecodeContext
  readonly #readers: TallReaders
  #columns: TallColumns | undefined

  constructor(ctx: DecodeContext) {
    this.#ctx = ctx
    this.#readers = { cells: new CellReader(ctx.options), qualities: ctx.qualities }
  }

  decode(row: CsvRow, sink: BatchSink): void {
    if (this.#columns === undefined) {
      const found = requireColumns(row.fields, COLUMNS, 'long', row.line, this.#ctx.options.separator)
      this.#columns = { ...found, quality: findColumn(row.fields, QUALITY) }
      return
    }
    decodeTallRow(this.#ctx, this.#readers, this.#columns, row, sink)
  }

  finish(): void {
    if (this.#columns === undefined) throw new HistorianHeaderInvalid('The file has no header line.', 1)
  }
}
