import type { CellReader } from '../cells.ts'
import type { CsvRow } from '../csv.ts'
import { HistorianHeaderInvalid } from '../errors.ts'
import { describeHeader } from '../header.ts'
import type { BatchSink } from '../sink.ts'
import { quoted } from '../../../../errors/quoted.ts'

/**
 * Tag names of a one-row-a-timestamp header, from column `first` on. An unnamed column is
 * kept as '' (its cells must stay empty); a repeated name would merge two series, so it is refused.
 */
export function readTagColumns(header: readonly string[], first: number, line: number): string[] {
  const tags = header.slice(first).map((name) => name.trim())
  if (tags.every((t) => t === '')) {
    throw new HistorianHeaderInvalid(`The header on line ${line} names no tag columns; found ${describeHeader(header)}.`, line)
  }
  const seen = new Set<string>()
  for (const tag of tags) {
    if (tag !== '' && seen.has(tag)) throw new HistorianHeaderInvalid(`Tag column ${quoted(tag)} appears twice in the header on line ${line}.`, line)
    seen.add(tag)
  }
  return tags
}

/** Refuses a wide row whole (its time, say): one value read, one rejection (ParseSummary.valuesRead). */
export function rejectWideRow(sink: BatchSink, line: number, reason: string): void {
  sink.valuesRead++
  sink.reject(line, reason)
}

/**
 * Emits one sample per non-empty cell of a wide row whose time is `ts`; quality is good. The row holds one value a
 * tag column of the header: each is a sample, a rejection, or an empty or sentinel cell (cells missing at the end of
 * a short row, and blank ones under a column without a name, are empty).
 */
export function decodeWideCells(cells: CellReader, tags: readonly string[], first: number, ts: number, row: CsvRow, sink: BatchSink): void {
  const f = row.fields
  if (f.length > tags.length + first) {
    const extra = f.slice(tags.length + first).some((x) => x.trim() !== '')
    if (extra) {
      rejectWideRow(sink, row.line, `row has ${f.length} fields but the header has ${tags.length + first} columns`)
      return
    }
  }
  sink.valuesRead += tags.length
  const end = Math.min(f.length, tags.length + first)
  sink.emptyCells += tags.length - Math.max(0, end - first)
  for (let i = first; i < end; i++) {
    const raw = f[i]!
    if (raw === '') {
      sink.emptyCells++
      continue
    }
    const tag = tags[i - first]!
    if (tag === '') {
      if (raw.trim() !== '') sink.reject(row.line, `a value in column ${i + 1}, which has no tag name`)
      else sink.emptyCells++
      continue
    }
    sink.cell(cells, tag, ts, raw, 'good', row.line, tag)
  }
}
