import type { DecimalMark } from './options.ts'
import { quoted } from '../../../errors/quoted.ts'

const PLUS = 0x2b
const MINUS = 0x2d
const DOT = 0x2e
const COMMA = 0x2c
const SPACE = 0x20

/**
 * Reads a plain decimal number: optional sign, digits with at most one decimal mark, an
 * optional exponent, surrounding spaces allowed. Returns NaN for anything else, so `1,234.5`
 * (thousands separator), `0x1F`, `NaN`, `Inf` and `` are all refused: `Number()` alone would
 * accept some of them (`Number('') === 0`, `Number('Infinity')`).
 */
export function parseDecimal(text: string, decimal: DecimalMark | 'either'): number {
  let start = 0
  let end = text.length
  while (start < end && text.charCodeAt(start) === SPACE) start++
  while (end > start && text.charCodeAt(end - 1) === SPACE) end--
  let i = start
  let c = text.charCodeAt(i)
  const isNegative = c === MINUS
  if (c === PLUS || c === MINUS) c = text.charCodeAt(++i)
  let digits = 0
  let markAt = -1
  let mantissa = 0
  let fractionDigits = 0
  for (; i < end; c = text.charCodeAt(++i)) {
    if (c >= 0x30 && c <= 0x39) {
      digits++
      mantissa = mantissa * 10 + (c - 0x30)
      if (markAt !== -1) fractionDigits++
    } else if ((c === DOT || c === COMMA) && markAt === -1) markAt = i
    else break
  }
  if (digits === 0) return Number.NaN
  let hasExponent = false
  if (i < end && (c === 0x65 || c === 0x45)) {
    hasExponent = true
    c = text.charCodeAt(++i)
    if (c === PLUS || c === MINUS) c = text.charCodeAt(++i)
    const expStart = i
    while (i < end && c >= 0x30 && c <= 0x39) c = text.charCodeAt(++i)
    if (i === expStart) return Number.NaN
  }
  if (i !== end) return Number.NaN
  if (markAt !== -1) {
    const mark = text.charCodeAt(markAt)
    if (mark === DOT ? decimal === ',' : decimal === '.') return Number.NaN
  }
  // Clinger's fast path: an integer mantissa below 2^53 divided by an exact power of ten is
  // correctly rounded, so most historian values skip the generic string-to-double routine.
  if (!hasExponent && digits <= 15 && fractionDigits <= 22) {
    const value = fractionDigits === 0 ? mantissa : mantissa / POWERS_OF_TEN[fractionDigits]!
    return isNegative ? -value : value
  }
  const body = text.slice(start, end)
  const value = Number(markAt !== -1 && text.charCodeAt(markAt) === COMMA ? body.replace(',', '.') : body)
  // Past the largest double (`1e400`, 400 digits) Number() answers Infinity, which no sample may hold.
  return Number.isFinite(value) ? value : Number.NaN
}

const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => 10 ** k)

/** True when `text` was meant as a number (so a failure is an error, not a text state). */
export function isNumberLike(text: string): boolean {
  return /^\s*[+-]?(?:[0-9]|[.,][0-9]|nan\s*$|inf(?:inity)?\s*$)/i.test(text)
}

/** Why `parseDecimal` refused a number-like text; only called on the error path. */
export function numberProblem(text: string, decimal: DecimalMark | 'either'): string {
  const t = text.trim()
  if (/^[+-]?(?:nan|inf(?:inity)?)$/i.test(t)) return `${quoted(t)} is not accepted as a number (NaN/Infinity)`
  if (Math.abs(Number(t.replace(',', '.'))) === Infinity) return `${quoted(t)} is past the largest number a sample holds (about ±1.8e308)`
  const dots = t.split('.').length - 1
  const commas = t.split(',').length - 1
  if (dots + commas > 1 || /\d[ '\u00a0\u202f]\d/.test(t)) return `${quoted(t)} has a thousands separator, which is refused`
  if (commas === 1 && decimal === '.') return `${quoted(t)} has a decimal comma, which this file's settings refuse (decimal '.')`
  if (dots === 1 && decimal === ',') return `${quoted(t)} has a decimal point, but decimal ',' was chosen`
  return `${quoted(t)} is not a number`
}
