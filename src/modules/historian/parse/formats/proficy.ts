import { CellReader } from '../cells.ts'
import type { CsvRow } from '../csv.ts'
import { HistorianHeaderInvalid } from '../errors.ts'
import { findColumn, requireColumns } from '../header.ts'
import type { BatchSink } from '../sink.ts'
import type { DecodeContext, FormatAdapter, RowDecoder } from './adapter.ts'
import { decodeTallRow } from './tall-row.ts'
import type { TallColumns, TallReaders } from './tall-row.ts'

const COLUMNS = {
  tag: ['tagname'],
  time: ['timestamp'],
  value: ['value'],
}
const QUALITY = ['dataquality']

/**
 * GE Proficy Historian File-collector CSV: `*` comment lines anywhere, a `[Data]` section
 * line, then `Tagname,TimeStamp,Value,DataQuality` (DataQuality `Good`/`Bad`/`Uncertain`
 * or percent 0..100). Several `[Data]` sections may follow each other, each with its header;
 * a `[Tags]`, `[Messages]` or `[Alarms]` section is refused. Default dateOrder mdy (GE's
 * docs show `7/20/01 11:07`).
 */
export const proficyFormat: FormatAdapter = {
  name: 'proficy',
  signature: 'proficy: optional * comments, [Data], then Tagname,TimeStamp,Value,DataQuality',
  looksLike(rows) {
    const first = rows[0]?.fields[0]?.trim() ?? ''
    if (first.startsWith('*') || first.toLowerCase() === '[data]') return true
    return findColumn(rows[0]?.fields ?? [], QUALITY) !== -1 && findColumn(rows[0]?.fields ?? [], COLUMNS.tag) !== -1
  },
  createDecoder: (ctx) => new ProficyDecoder(ctx),
}

class ProficyDecoder implements RowDecoder {
  readonly #ctx: DecodeContext
  readonly #readers: TallReaders
  #columns: TallColumns | undefined
  #hasHeader = false

  constructor(ctx: DecodeContext) {
    this.#ctx = ctx
    this.#readers = { cells: new CellReader(ctx.options), qualities: ctx.qualities }
  }

  decode(row: CsvRow, sink: BatchSink): void {
    const first = row.fields[0]!
    if (first.charCodeAt(0) === 0x2a || first.trimStart().startsWith('*')) return
    if (first.charCodeAt(0) === 0x5b && row.fields.every((f, i) => i === 0 || f.trim() === '')) {
      this.#section(first.trim(), row.line)
      return
    }
    if (this.#columns === undefined) {
      const found = requireColumns(row.fields, COLUMNS, 'proficy', row.line, this.#ctx.options.separator)
      this.#columns = { ...found, quality: findColumn(row.fields, QUALITY) }
      this.#hasHeader = true
      return
    }
    decodeTallRow(this.#ctx, this.#readers, this.#columns, row, sink)
  }

  #section(name: string, line: number): void {
    if (name.toLowerCase() !== '[data]') {
      throw new HistorianHeaderInvalid(`Section ${name} on line ${line} is not a [Data] section; only data can be imported.`, line)
    }
    this.#columns = undefined
  }

  finish(): void {
    if (!this.#hasHeader) throw new HistorianHeaderInvalid('No Tagname,TimeStamp,Value header was found after the comments and [Data] line.', 1)
  }
}
