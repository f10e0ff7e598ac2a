import type { CellReader } from '../cells.ts'
import type { CsvRow } from '../csv.ts'
import type { BatchSink } from '../sink.ts'
import type { Quality } from '../types.ts'
import type { DecodeContext } from './adapter.ts'
import { quoted } from '../../../../errors/quoted.ts'

/** Column positions of a one-sample-a-row layout; `quality` is -1 when there is none. */
export interface TallColumns {
  tag: number
  time: number
  value: number
  quality: number
}

export function widestColumn(columns: TallColumns): number {
  return Math.max(columns.tag, columns.time, columns.value, columns.quality)
}

/** How a layout reads its value and quality cells. */
export interface TallReaders {
  cells: CellReader
  qualities: { read(raw: string): Quality | undefined }
}

/**
 * Decodes a `tag, time, value[, quality]` row (long, ignition-tall, proficy, piconfig).
 * No quality column: good. Tag names are trimmed.
 */
export function decodeTallRow(ctx: DecodeContext, readers: TallReaders, columns: TallColumns, row: CsvRow, sink: BatchSink): void {
  sink.rowsRead++
  sink.valuesRead++
  const f = row.fields
  const need = widestColumn(columns) + 1
  if (f.length < need) {
    sink.reject(row.line, `expected at least ${need} fields, found ${f.length}`)
    return
  }
  const tag = f[columns.tag]!.trim()
  if (tag === '') {
    sink.reject(row.line, 'empty tag name')
    return
  }
  const ts = ctx.times.read(f[columns.time]!, tag)
  if (ts !== ts) {
    sink.reject(row.line, ctx.times.reason)
    return
  }
  let quality: Quality | undefined = 'good'
  if (columns.quality >= 0) {
    const raw = f[columns.quality]!
    quality = readers.qualities.read(raw)
    if (quality === undefined) {
      sink.reject(row.line, raw.trim() === '' ? 'empty quality' : `unknown quality ${quoted(raw.trim())}`)
      return
    }
  }
  sink.cell(readers.cells, tag, ts, f[columns.value]!, quality, row.line)
}
