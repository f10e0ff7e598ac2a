import { CellReader } from '../cells.ts'
import type { CsvRow } from '../csv.ts'
import { HistorianHeaderInvalid } from '../errors.ts'
import { findColumn, requireColumns } from '../header.ts'
import { avevaQuality } from '../quality.ts'
import type { BatchSink } from '../sink.ts'
import type { DecodeContext, FormatAdapter, RowDecoder } from './adapter.ts'

const REQUIRED = {
  time: ['datetime'],
  tag: ['tagname'],
  value: ['value'],
}
const OPTIONAL = {
  text: ['vvalue'],
  quality: ['quality'],
  detail: ['qualitydetail'],
  opc: ['opcquality'],
}

interface Columns {
  time: number
  tag: number
  value: number
  text: number
  quality: number
  detail: number
  opc: number
}

/**
 * AVEVA (Wonderware) Historian `History` table export:
 * `DateTime,TagName,Value,vValue,Quality,QualityDetail` (extra `ww*` columns ignored).
 * `Value` is the float (NULL for string tags); when it is empty or `NULL`, `vValue` holds the
 * value, kept as text for string tags. Quality 0 good, 1 bad, 16 doubtful (uncertain), else
 * QualityDetail/OPCQuality read as OPC (192 good). Default dateOrder ymd (SQL `datetime2`).
 */
export const avevaHistoryFormat: FormatAdapter = {
  name: 'aveva-history',
  signature: 'aveva-history: DateTime,TagName,Value,vValue,Quality,QualityDetail',
  looksLike(rows) {
    const header = rows[0]?.fields ?? []
    const hasRequired = Object.values(REQUIRED).every((aliases) => findColumn(header, aliases) !== -1)
    return hasRequired && (findColumn(header, OPTIONAL.text) !== -1 || findColumn(header, OPTIONAL.detail) !== -1)
  },
  createDecoder: (ctx) => new AvevaDecoder(ctx),
}

class AvevaDecoder implements RowDecoder {
  readonly #ctx: DecodeContext
  // Only vValue may carry text: Value is a SQL float column.
  readonly #values: CellReader
  readonly #texts: CellReader
  #columns: Columns | undefined

  constructor(ctx: DecodeContext) {
    this.#ctx = ctx
    // SQL Server Management Studio writes NULL for a null column.
    this.#values = new CellReader(ctx.options, { missingWords: ['NULL'], allowsText: false })
    this.#texts = new CellReader(ctx.options, { missingWords: ['NULL'], allowsText: true })
  }

  decode(row: CsvRow, sink: BatchSink): void {
    if (this.#columns === undefined) {
      const required = requireColumns(row.fields, REQUIRED, 'aveva-history', row.line, this.#ctx.options.separator)
      const at = (aliases: readonly string[]) => findColumn(row.fields, aliases)
      this.#columns = { ...required, text: at(OPTIONAL.text), quality: at(OPTIONAL.quality), detail: at(OPTIONAL.detail), opc: at(OPTIONAL.opc) }
      return
    }
    this.#decodeRow(this.#columns, row, sink)
  }

  #decodeRow(c: Columns, row: CsvRow, sink: BatchSink): void {
    sink.rowsRead++
    sink.valuesRead++
    const f = row.fields
    const cell = (index: number) => (index >= 0 ? (f[index] ?? '') : '')
    const tag = cell(c.tag).trim()
    if (tag === '') {
      sink.reject(row.line, 'empty tag name')
      return
    }
    const ts = this.#ctx.times.read(cell(c.time), tag)
    if (ts !== ts) {
      sink.reject(row.line, this.#ctx.times.reason)
      return
    }
    const quality = avevaQuality(cell(c.quality), cell(c.detail), cell(c.opc))
    if (quality === undefined) {
      sink.reject(row.line, `unknown quality ${cell(c.quality)} (QualityDetail ${cell(c.detail) || 'empty'})`)
      return
    }
    const value = cell(c.value)
    if (c.text >= 0 && isNull(value)) sink.cell(this.#texts, tag, ts, cell(c.text), quality, row.line)
    else sink.cell(this.#values, tag, ts, value, quality, row.line)
  }

  finish(): void {
    if (this.#columns === undefined) throw new HistorianHeaderInvalid('The file has no header line.', 1)
  }
}

function isNull(value: string): boolean {
  const t = value.trim()
  return t === '' || t.toUpperCase() === 'NULL'
}
