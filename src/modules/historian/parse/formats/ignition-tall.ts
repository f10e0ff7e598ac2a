import { CellReader } from '../cells.ts'
import type { CsvRow } from '../csv.ts'
import { HistorianHeaderInvalid } from '../errors.ts'
import { findColumn, requireColumns } from '../header.ts'
import type { BatchSink } from '../sink.ts'
import type { DecodeContext, FormatAdapter, RowDecoder } from './adapter.ts'
import { decodeTallRow } from './tall-row.ts'
import type { TallColumns, TallReaders } from './tall-row.ts'

const COLUMNS = {
  tag: ['path', 'tagpath'],
  value: ['value'],
  quality: ['quality'],
  time: ['timestamp', 't_stamp'],
}

/**
 * Ignition tall history export: `Path,Value,Quality,Timestamp`. Quality is a QualityCode
 * name (`Good`, `Good_Unspecified`, `Bad_*`, `Uncertain_*`, `Error_*`) or an OPC code (192,
 * 0); string tags keep their text. Default dateOrder mdy (US-locale Designer exports).
 */
export const ignitionTallFormat: FormatAdapter = {
  name: 'ignition-tall',
  signature: 'ignition-tall: Path,Value,Quality,Timestamp',
  looksLike(rows) {
    const header = rows[0]?.fields ?? []
    return Object.values(COLUMNS).every((aliases) => findColumn(header, aliases) !== -1)
  },
  createDecoder: (ctx) => new IgnitionTallDecoder(ctx),
}

class IgnitionTallDecoder implements RowDecoder {
  readonly #ctx: DecodeContext
  readonly #readers: TallReaders
  #columns: TallColumns | undefined

  constructor(ctx: DecodeContext) {
    this.#ctx = ctx
    this.#readers = { cells: new CellReader(ctx.options), qualities: ctx.qualities }
  }

  decode(row: CsvRow, sink: BatchSink): void {
    if (this.#columns === undefined) {
      this.#columns = requireColumns(row.fields, COLUMNS, 'ignition-tall', row.line, this.#ctx.options.separator)
      return
    }
    decodeTallRow(this.#ctx, this.#readers, this.#columns, row, sink)
  }

  finish(): void {
    if (this.#columns === undefined) throw new HistorianHeaderInvalid('The file has no header line.', 1)
  }
}
