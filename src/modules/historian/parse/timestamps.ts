import { daysFromCivil, daysInMonth } from './calendar.ts'
import type { DateOrder } from './options.ts'
import { Cursor, isLetter } from './timestamp-cursor.ts'
import { quoted } from '../../../errors/quoted.ts'

/** A parsed timestamp: wall-clock milliseconds as if UTC, plus the offset when the text gave one. */
export interface ParsedTime {
  wallMs: number
  /** Offset east of UTC in ms; NaN for a local time, to be read in the batch time zone. */
  offsetMs: number
}

const DAY_MS = 86_400_000

/**
 * Parses the timestamp forms found in historian exports, scanning char codes (no regex, no
 * Date): ISO 8601 with `T` or a space, `Z`/`±HH:MM`/`UTC` or no zone; `yyyy-MM-dd`,
 * `dd/MM/yyyy`, `d.M.yyyy`, `M/d/yy` (per `order`); PI `dd-Mon-yy`; any number of fractional
 * digits (`.fffffff`, truncated to ms); seconds optional; `AM`/`PM`; a 12-13 digit epoch-ms.
 * Two-digit years: 00-69 are 20xx, 70-99 19xx. Fills `out` and returns undefined, or returns
 * the reason the text was refused.
 */
export function parseTimestamp(text: string, order: DateOrder, out: ParsedTime): string | undefined {
  if (readIsoFast(text, out)) return undefined
  const s = new Cursor(text)
  s.skipSpaces()
  const first = s.digits(16)
  const firstCount = s.count
  if (firstCount >= 12 && firstCount <= 13 && s.atEnd()) {
    out.wallMs = first
    out.offsetMs = 0
    return undefined
  }
  let year: number, month: number, day: number
  const sep = s.peek()
  if (firstCount === 0 || (sep !== 0x2d && sep !== 0x2f && sep !== 0x2e)) return unrecognised(text)
  s.next()
  if (firstCount === 4) {
    year = first
    month = s.digits(2)
    if (!s.eat(sep)) return unrecognised(text)
    day = s.digits(2)
  } else if (firstCount <= 2 && isLetter(s.peek())) {
    day = first
    month = s.monthName()
    if (month === 0 || !(s.eat(sep) || s.eat(0x20))) return unrecognised(text)
    year = s.year()
  } else if (firstCount <= 2) {
    if (order === 'ymd') return `${quoted(text)} is not year-first, as dateOrder ymd requires`
    const second = s.digits(2)
    if (!s.eat(sep)) return unrecognised(text)
    year = s.year()
    day = order === 'dmy' ? first : second
    month = order === 'dmy' ? second : first
  } else {
    return unrecognised(text)
  }
  if (Number.isNaN(year + month + day)) return unrecognised(text)
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return `${quoted(text)} is not a calendar date`
  let clock = 0
  out.offsetMs = Number.NaN
  if (s.eat(0x54) || s.eat(0x74) || s.skipSpaces()) {
    if (!s.atEnd()) {
      clock = readClock(s)
      if (Number.isNaN(clock)) return `${quoted(text)} has no valid time of day`
      s.skipSpaces()
      out.offsetMs = readZone(s)
      if (out.offsetMs === Infinity) return `${quoted(text)} has an unreadable UTC offset`
    }
  }
  s.skipSpaces()
  if (!s.atEnd()) return unrecognised(text)
  out.wallMs = daysFromCivil(year, month, day) * DAY_MS + clock
  return undefined
}

const ZONED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i
const zoned: ParsedTime = { wallMs: 0, offsetMs: 0 }

/**
 * An ISO 8601 date-time with `Z` or an offset (seconds and fraction optional) in epoch ms, or NaN for any other text
 * and for a date, time or offset that does not exist (the live push, the series reads). `Date.parse` would roll
 * 2024-02-31 over to 2 March and read text without an offset in the server's zone.
 */
export function parseZonedTime(text: string): number {
  if (!ZONED.test(text) || parseTimestamp(text, 'ymd', zoned) !== undefined) return Number.NaN
  return zoned.wallMs - zoned.offsetMs
}

/**
 * Fixed-position fast path for `yyyy-MM-dd[T ]HH:mm:ss[.fff…][Z]`, the most common form in
 * large exports; returns false (and the general parser runs) for anything else.
 */
function readIsoFast(text: string, out: ParsedTime): boolean {
  const n = text.length
  if (n < 19 || text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d || text.charCodeAt(13) !== 0x3a || text.charCodeAt(16) !== 0x3a) return false
  const t = text.charCodeAt(10)
  if (t !== 0x54 && t !== 0x20) return false
  const year = digitsAt(text, 0, 4)
  const month = digitsAt(text, 5, 2)
  const day = digitsAt(text, 8, 2)
  const hour = digitsAt(text, 11, 2)
  const minute = digitsAt(text, 14, 2)
  const second = digitsAt(text, 17, 2)
  if (Number.isNaN(year + month + day + hour + minute + second)) return false
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return false
  let i = 19
  let ms = 0
  if (i < n && text.charCodeAt(i) === 0x2e) {
    let scale = 100
    for (i++; i < n; i++) {
      const c = text.charCodeAt(i) - 0x30
      if (c < 0 || c > 9) break
      ms += c * scale
      scale /= 10
    }
    ms = Math.floor(ms)
  }
  if (i === n) out.offsetMs = Number.NaN
  else if (i === n - 1 && text.charCodeAt(i) === 0x5a) out.offsetMs = 0
  else return false
  out.wallMs = daysFromCivil(year, month, day) * DAY_MS + hour * 3_600_000 + minute * 60_000 + second * 1000 + ms
  return true
}

function digitsAt(text: string, from: number, count: number): number {
  let value = 0
  for (let i = from; i < from + count; i++) {
    const c = text.charCodeAt(i) - 0x30
    if (c < 0 || c > 9) return Number.NaN
    value = value * 10 + c
  }
  return value
}

function readClock(s: Cursor): number {
  let hour = s.digits(2)
  if (s.count === 0 || !s.eat(0x3a)) return Number.NaN
  const minute = s.digits(2)
  if (s.count !== 2) return Number.NaN
  let sec = 0
  let ms = 0
  if (s.eat(0x3a)) {
    sec = s.digits(2)
    if (s.count !== 2) return Number.NaN
    if (s.eat(0x2e) || s.eat(0x2c)) ms = s.fractionMs()
    if (Number.isNaN(ms)) return Number.NaN
  }
  if (s.skipSpaces() || isLetter(s.peek())) {
    const meridiem = s.meridiem()
    if (meridiem !== 0) {
      if (hour < 1 || hour > 12) return Number.NaN
      hour = (hour % 12) + (meridiem === 2 ? 12 : 0)
    }
  }
  if (hour > 23 || minute > 59 || sec > 59) return Number.NaN
  return hour * 3_600_000 + minute * 60_000 + sec * 1000 + ms
}

/** Offset in ms; NaN when the text has no zone; Infinity when the zone cannot be read. */
function readZone(s: Cursor): number {
  const c = s.peek()
  if (c === 0x5a || c === 0x7a) {
    s.next()
    return 0
  }
  if (s.word('utc') || s.word('gmt')) return 0
  if (c !== 0x2b && c !== 0x2d) return Number.NaN
  s.next()
  const hh = s.digits(2)
  if (s.count !== 2) return Infinity
  s.eat(0x3a)
  const mm = s.digits(2)
  const minuteDigits: number = s.count
  const minutes = hh * 60 + (minuteDigits === 2 ? mm : 0)
  // No zone is further from UTC than ±14:00 (Kiribati's +14:00 the furthest east).
  if (minuteDigits === 1 || mm > 59 || minutes > 14 * 60) return Infinity
  const offset = minutes * 60_000
  return c === 0x2d ? -offset : offset
}

function unrecognised(text: string): string {
  return `${quoted(text)} is not a timestamp this parser reads`
}
