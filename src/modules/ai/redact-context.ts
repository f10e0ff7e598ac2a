// Context checks that keep the redactor from eating ordinary plant prompts (see redact.test.ts for the cases).

const CIP_KEYWORD = /\b(?:cip|path|route|routing|slot|backplane|conn(?:ection)?[ _-]?path)["']?\s*(?:[:=]|\bis\b|\bset to\b)?\s*["'`([]?$/i

/** A numbers-only CIP route (`1,0`) counts only right after a word such as `path`, `route` or `slot`. */
export function hasCipRouteKeywordBefore(before: string): boolean {
  return CIP_KEYWORD.test(before)
}

/** `firmware 10.2.0.3`, `version: 1.2.3.4`: a four-part version number, not an address. */
export function isVersionBefore(before: string): boolean {
  return /\b(?:firmware|fw|version|ver|rev|revision|release|build)\s*[:=]?\s*$/i.test(before)
}

// A number followed by a unit is a measurement, never a PIN: `100000 Pa`, `250000 kg`, `1500000 W`.
const UNIT = /^ ?(?:%|°[CF]|[kMGmµu]?(?:V|A|W|Wh|VA|VAr|var|Hz|Pa|bar|Ω|ohm|N|Nm|J)|rpm|ms|s|min|h|kg|t|mm|cm|km|m|m3|m³|l|L|ppm|pcs)(?![A-Za-z0-9])/

export function isUnitAfter(after: string): boolean {
  return UNIT.test(after)
}

function isDate(year: number, month: number, day: number): boolean {
  if (year < 1970 || year > 2099 || month < 1 || month > 12 || day < 1) return false
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate()
}

function isTime(hour: number, minute: number): boolean {
  return hour <= 23 && minute <= 59
}

// Unix seconds from 2000-01-01 to 2100-01-01: ten digits in a log line are far more often a time than a PIN.
const EPOCH_SECONDS_MIN = 946_684_800
const EPOCH_SECONDS_MAX = 4_102_444_800

/** Compact dates and times (`20240115`, `15012024`, `2024011510`, `202401151030`) and Unix seconds. */
export function isCompactTimestamp(digits: string): boolean {
  const n = (from: number, to: number): number => Number(digits.slice(from, to))
  switch (digits.length) {
    case 8:
      return isDate(n(0, 4), n(4, 6), n(6, 8)) || isDate(n(4, 8), n(2, 4), n(0, 2))
    case 10: {
      const seconds = Number(digits)
      if (seconds >= EPOCH_SECONDS_MIN && seconds < EPOCH_SECONDS_MAX) return true
      return isDate(n(0, 4), n(4, 6), n(6, 8)) && isTime(n(8, 10), 0)
    }
    case 12:
      return isDate(n(0, 4), n(4, 6), n(6, 8)) && isTime(n(8, 10), n(10, 12))
    default:
      return false
  }
}
