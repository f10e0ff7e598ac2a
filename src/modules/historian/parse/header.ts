import { HistorianHeaderInvalid } from './errors.ts'
import type { Separator } from './options.ts'

/** Header cell as compared: trimmed, lower case, without a BOM. */
export function normaliseName(name: string): string {
  return name
    .replace(/^\uFEFF/, '')
    .trim()
    .toLowerCase()
}

/** Index of the first header cell equal (case-insensitively) to one of `aliases`, else -1. */
export function findColumn(header: readonly string[], aliases: readonly string[]): number {
  for (let i = 0; i < header.length; i++) {
    if (aliases.includes(normaliseName(header[i]!))) return i
  }
  return -1
}

/**
 * Resolves required columns by alias, or refuses the header naming what is missing and
 * what was found, with a hint when the header looks split on the wrong separator.
 */
export function requireColumns<K extends string>(
  header: readonly string[],
  spec: Readonly<Record<K, readonly string[]>>,
  layout: string,
  line: number,
  separator: Separator,
): Record<K, number> {
  const found = {} as Record<K, number>
  const missing: string[] = []
  for (const key of Object.keys(spec) as K[]) {
    const index = findColumn(header, spec[key])
    if (index === -1) missing.push(spec[key].join('|'))
    found[key] = index
    // The same name twice leaves which column holds the samples to chance: refused, never picked.
    const again = index === -1 ? -1 : header.findIndex((cell, i) => i > index && normaliseName(cell) === normaliseName(header[index]!))
    if (again !== -1)
      throw new HistorianHeaderInvalid(
        `The ${layout} header on line ${line} has column "${header[index]!.trim()}" twice (columns ${index + 1} and ${again + 1}); name each column once.`,
        line,
      )
  }
  if (missing.length === 0) return found
  throw new HistorianHeaderInvalid(
    `The ${layout} header on line ${line} lacks ${missing.join(', ')}; found ${describeHeader(header)}.${separatorHint(header, separator)}`,
    line,
  )
}

export function describeHeader(header: readonly string[]): string {
  const shown = header
    .slice(0, 8)
    .map((h) => JSON.stringify(h))
    .join(',')
  return header.length > 8 ? `${shown},… (${header.length} columns)` : shown
}

/** Explains a one-column header that holds another separator: the usual separator mismatch. */
export function separatorHint(header: readonly string[], separator: Separator): string {
  if (header.length !== 1) return ''
  const cell = header[0]!
  const other = ([',', ';', '\t'] as const).find((s) => s !== separator && cell.includes(s))
  if (other === undefined) return ''
  const name = (s: string) => (s === '\t' ? 'tab' : `'${s}'`)
  return ` The header is one column: the file seems separated by ${name(other)}, not ${name(separator)}.`
}
