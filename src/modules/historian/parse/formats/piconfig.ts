import { CellReader } from '../cells.ts'
import type { CsvRow } from '../csv.ts'
import { HistorianHeaderInvalid } from '../errors.ts'
import { qualityFromText } from '../quality.ts'
import type { Quality } from '../types.ts'
import type { BatchSink } from '../sink.ts'
import { parseTimestamp } from '../timestamps.ts'
import type { DecodeContext, FormatAdapter, RowDecoder } from './adapter.ts'
import { decodeTallRow } from './tall-row.ts'
import type { TallColumns, TallReaders } from './tall-row.ts'

const DEFAULT_COLUMNS: TallColumns = { tag: 0, value: 1, quality: 2, time: 3 }
const ISTR_NAMES: Readonly<Record<string, keyof TallColumns>> = { tag: 'tag', value: 'value', status: 'quality', time: 'time' }

/**
 * OSIsoft PI piconfig dump: no header, `tag,value,status,time`, PI timestamps
 * (`23-Mar-20 06:57:23.02055`), text status (`GOOD`, PI system states). A PI digital state
 * in the value column is kept as text. piconfig `@` directives are skipped, and an
 * `@istr` line, if any, sets the column order (`@istr tag,time,value,status`).
 */
export const piconfigFormat: FormatAdapter = {
  name: 'piconfig',
  signature: 'piconfig: no header; tag,value,status,time (PI dd-Mon-yy HH:mm:ss.fffff)',
  looksLike(rows) {
    const f = rows[0]?.fields ?? []
    if (f[0]?.trimStart().startsWith('@')) return true
    const parsed = { wallMs: 0, offsetMs: 0 }
    return f.length === 4 && qualityFromText(f[2]!, 'opc') !== undefined && parseTimestamp(f[3]!, 'dmy', parsed) === undefined
  },
  createDecoder: (ctx) => new PiconfigDecoder(ctx),
}

class PiconfigDecoder implements RowDecoder {
  readonly #ctx: DecodeContext
  readonly #readers: TallReaders
  #columns = DEFAULT_COLUMNS

  constructor(ctx: DecodeContext) {
    this.#ctx = ctx
    this.#readers = { cells: new CellReader(ctx.options), qualities: { read: piStatus } }
  }

  decode(row: CsvRow, sink: BatchSink): void {
    const first = row.fields[0]!.trimStart()
    if (first.charCodeAt(0) === 0x40) {
      if (first.toLowerCase().startsWith('@istr')) this.#columns = readIstr(row)
      return
    }
    decodeTallRow(this.#ctx, this.#readers, this.#columns, row, sink)
  }

  finish(): void {}
}

/** PI status: a word (`GOOD`, a system state), 0 for good, or a negative system-state code (bad). */
function piStatus(raw: string): Quality | undefined {
  const t = raw.trim()
  if (t === '' || t === '0') return 'good'
  if (/^-\d+$/.test(t)) return 'bad'
  return qualityFromText(t, 'opc')
}

function readIstr(row: CsvRow): TallColumns {
  const names = [row.fields[0]!.trim().slice(5), ...row.fields.slice(1)].map((n) => n.trim().toLowerCase())
  const columns: TallColumns = { tag: -1, value: -1, quality: -1, time: -1 }
  names.forEach((name, index) => {
    const key = ISTR_NAMES[name]
    if (key !== undefined) columns[key] = index
  })
  if (columns.tag === -1 || columns.value === -1 || columns.time === -1) {
    throw new HistorianHeaderInvalid(`The @istr line ${row.line} must name tag, value and time; found ${names.join(',')}.`, row.line)
  }
  return columns
}
