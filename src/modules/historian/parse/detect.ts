import type { CsvRow } from './csv.ts'
import { HistorianFormatUndetected } from './errors.ts'
import { describeHeader } from './header.ts'
import { FORMATS } from './formats/registry.ts'
import type { FormatName } from './types.ts'

/** Rows `auto` looks at: the header and a data row are enough for every layout. */
export const DETECTION_ROWS = 2

/**
 * Recognises the layout from the first non-blank rows, trying the most specific layouts
 * first (see FORMATS). Throws HistorianFormatUndetected listing every candidate.
 */
export function detectFormat(rows: readonly CsvRow[]): FormatName {
  const match = FORMATS.find((format) => format.looksLike(rows))
  if (match !== undefined) return match.name
  const first = rows[0]
  const seen = first === undefined ? 'an empty file' : `line ${first.line}: ${describeHeader(first.fields)}`
  const candidates = FORMATS.map((f) => f.signature)
  throw new HistorianFormatUndetected(
    `Could not recognise the export layout from ${seen}. Candidates: ${candidates.join(' | ')}. Choose the format explicitly.`,
    FORMATS.map((f) => f.name),
  )
}
