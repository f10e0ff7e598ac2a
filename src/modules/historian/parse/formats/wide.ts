import { CellReader } from '../cells.ts'
import type { CsvRow } from '../csv.ts'
import { HistorianHeaderInvalid } from '../errors.ts'
import { separatorHint } from '../header.ts'
import type { BatchSink } from '../sink.ts'
import { parseTimestamp } from '../timestamps.ts'
import type { DecodeContext, FormatAdapter, RowDecoder } from './adapter.ts'
import { decodeWideCells, readTagColumns, rejectWideRow } from './wide-row.ts'

/**
 * `timestamp,<tag1>,<tag2>,…`: one row a timestamp, the header names the tags (the first
 * column's name is free: `date`, `timestamp`, …). An empty cell means no sample; a cell
 * that is not a number is rejected alone (its column named), the rest of the row is kept.
 */
export const wideFormat: FormatAdapter = {
  name: 'wide',
  signature: 'wide: <time column>,<tag1>,<tag2>,… one row a timestamp',
  looksLike(rows) {
    const [header, data] = rows
    if (header === undefined || data === undefined || header.fields.length < 2) return false
    const probe = { wallMs: 0, offsetMs: 0 }
    const timeLike = (text: string) => parseTimestamp(text, 'dmy', probe) === undefined || parseTimestamp(text, 'mdy', probe) === undefined
    return !timeLike(header.fields[0]!) && timeLike(data.fields[0]!)
  },
  createDecoder: (ctx) => new WideDecoder(ctx),
}

class WideDecoder implements RowDecoder {
  readonly #ctx: DecodeContext
  readonly #cells: CellReader
  #tags: string[] | undefined

  constructor(ctx: DecodeContext) {
    this.#ctx = ctx
    this.#cells = new CellReader(ctx.options)
  }

  decode(row: CsvRow, sink: BatchSink): void {
    if (this.#tags === undefined) {
      if (row.fields.length < 2) {
        const hint = separatorHint(row.fields, this.#ctx.options.separator)
        throw new HistorianHeaderInvalid(`The wide header on line ${row.line} needs a time column and at least one tag column.${hint}`, row.line)
      }
      this.#tags = readTagColumns(row.fields, 1, row.line)
      return
    }
    sink.rowsRead++
    // The whole row shares one time, so the row is the series for fall-back ordering.
    const ts = this.#ctx.times.read(row.fields[0]!, '')
    if (ts !== ts) {
      rejectWideRow(sink, row.line, this.#ctx.times.reason)
      return
    }
    decodeWideCells(this.#cells, this.#tags, 1, ts, row, sink)
  }

  finish(): void {
    if (this.#tags === undefined) throw new HistorianHeaderInvalid('The file has no header line.', 1)
  }
}
