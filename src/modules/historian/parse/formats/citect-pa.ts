import { CellReader } from '../cells.ts'
import type { CsvRow } from '../csv.ts'
import { HistorianHeaderInvalid } from '../errors.ts'
import { describeHeader, normaliseName, separatorHint } from '../header.ts'
import type { BatchSink } from '../sink.ts'
import type { DecodeContext, FormatAdapter, RowDecoder } from './adapter.ts'
import { decodeWideCells, readTagColumns, rejectWideRow } from './wide-row.ts'
import { quoted } from '../../../../errors/quoted.ts'

// Process Analyst writes these for "no value at this time"; localized exports may differ.
const MISSING_WORDS = ['NA', 'N/A', 'GATED']

/**
 * Citect/Plant SCADA Process Analyst export: `Time,Milliseconds,<pane>-<pen>,…`. A blank
 * cell, `NA` or `GATED` is no sample; Milliseconds (0-999) adds to Time; other words
 * (`Off`, `Low [Acknowledged]`) are digital/alarm pen states kept as text. Quality is good.
 * Default dateOrder dmy (Citect's docs show `15/06/2004 01:17:25`).
 */
export const citectPaFormat: FormatAdapter = {
  name: 'citect-pa',
  signature: 'citect-pa: Time,Milliseconds,<pane>-<pen>,…',
  looksLike(rows) {
    const f = rows[0]?.fields ?? []
    return f.length >= 3 && normaliseName(f[0]!) === 'time' && normaliseName(f[1]!) === 'milliseconds'
  },
  createDecoder: (ctx) => new CitectDecoder(ctx),
}

class CitectDecoder implements RowDecoder {
  readonly #ctx: DecodeContext
  readonly #cells: CellReader
  #pens: string[] | undefined

  constructor(ctx: DecodeContext) {
    this.#ctx = ctx
    this.#cells = new CellReader(ctx.options, { missingWords: MISSING_WORDS })
  }

  decode(row: CsvRow, sink: BatchSink): void {
    if (this.#pens === undefined) {
      this.#pens = this.#header(row)
      return
    }
    sink.rowsRead++
    const msText = (row.fields[1] ?? '').trim()
    const ms = msText === '' ? 0 : Number(msText)
    if (!/^\d{0,3}$/.test(msText)) {
      rejectWideRow(sink, row.line, `Milliseconds ${quoted(msText)} is not an integer from 0 to 999`)
      return
    }
    const ts = this.#ctx.times.read(row.fields[0]!, '', ms)
    if (ts !== ts) {
      rejectWideRow(sink, row.line, this.#ctx.times.reason)
      return
    }
    decodeWideCells(this.#cells, this.#pens, 2, ts, row, sink)
  }

  #header(row: CsvRow): string[] {
    const f = row.fields
    if (f.length < 3 || normaliseName(f[0]!) !== 'time' || normaliseName(f[1]!) !== 'milliseconds') {
      throw new HistorianHeaderInvalid(
        `The citect-pa header on line ${row.line} must start Time,Milliseconds then pens; found ${describeHeader(f)}.${separatorHint(f, this.#ctx.options.separator)}`,
        row.line,
      )
    }
    return readTagColumns(f, 2, row.line)
  }

  finish(): void {
    if (this.#pens === undefined) throw new HistorianHeaderInvalid('The file has no header line.', 1)
  }
}
