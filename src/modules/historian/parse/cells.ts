import { isNumberLike, numberProblem, parseDecimal } from './numbers.ts'
import type { SettledOptions } from './options.ts'
import { quoted } from '../../../errors/quoted.ts'

/** What a value cell holds; see CellReader.read. */
export const CELL_NUMBER = 0
export const CELL_TEXT = 1
export const CELL_EMPTY = 2
export const CELL_SENTINEL = 3
export const CELL_INVALID = 4
export type CellKind = 0 | 1 | 2 | 3 | 4

/**
 * Classifies value cells. Results go to fields (`number`, `text`, `reason`) instead of a
 * fresh object per cell: this runs once per sample, millions of times per file.
 */
export class CellReader {
  number = 0
  text = ''
  reason = ''
  #decimal: SettledOptions['decimal']
  readonly #numericSentinels: ReadonlySet<number>
  readonly #textSentinels: ReadonlySet<string>
  readonly #missingWords: ReadonlySet<string>
  readonly #allowsText: boolean

  /**
   * `missingWords`: layout words for "no sample" (Citect `NA`, SQL `NULL`), any case.
   * `allowsText`: keep a non-numeric word as a text state (default: the layout's `textStates`).
   */
  constructor(options: SettledOptions, extra: { missingWords?: readonly string[]; allowsText?: boolean } = {}) {
    this.#decimal = options.decimal
    this.#numericSentinels = options.numericSentinels
    this.#textSentinels = options.textSentinels
    this.#missingWords = new Set((extra.missingWords ?? []).map((w) => w.toLowerCase()))
    this.#allowsText = extra.allowsText ?? options.textStates
  }

  read(raw: string): CellKind {
    if (raw === '') return CELL_EMPTY
    const t = raw.charCodeAt(0) === 0x20 || raw.charCodeAt(raw.length - 1) === 0x20 ? raw.trim() : raw
    if (t === '') return CELL_EMPTY
    if (this.#textSentinels.size > 0 && this.#textSentinels.has(t)) return CELL_SENTINEL
    const n = parseDecimal(t, this.#decimal)
    if (n === n) {
      if (this.#decimal === 'either') this.#lockDecimal(t)
      if (this.#numericSentinels.size > 0 && this.#numericSentinels.has(n)) return CELL_SENTINEL
      this.number = n
      return CELL_NUMBER
    }
    if (this.#missingWords.size > 0 && this.#missingWords.has(t.toLowerCase())) return CELL_EMPTY
    if (isNumberLike(t)) {
      this.reason = numberProblem(t, this.#decimal)
      return CELL_INVALID
    }
    if (this.#allowsText) {
      this.text = t
      return CELL_TEXT
    }
    this.reason = `${quoted(t)} is not a number (this layout keeps no text states)`
    return CELL_INVALID
  }

  // In a `;` file without an explicit mark, the first decimal mark seen is the file's, so a
  // later `1.234` in a decimal-comma file is refused instead of read as 1.234.
  #lockDecimal(t: string): void {
    if (t.includes(',')) this.#decimal = ','
    else if (t.includes('.')) this.#decimal = '.'
  }
}
