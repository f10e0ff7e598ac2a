// Proleptic Gregorian calendar arithmetic, without Date objects on the hot path.

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146_097 + doe - 719_468
}

/** Formats a wall time for messages: `2024-03-31 02:30:00.000`. */
export function formatWall(wallMs: number): string {
  return new Date(wallMs).toISOString().slice(0, 23).replace('T', ' ')
}

const ZONED = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:(Z)|([+-])(\d{2}):(\d{2}))$/i

/**
 * An ISO 8601 / RFC 3339 date-time with `Z` or an offset (seconds and fraction optional) in epoch ms, or NaN for any
 * other text and for a date or time that does not exist: `Date.parse` rolls 2024-02-31 over to 2 March and reads text
 * without an offset in the server's zone. A fraction below the millisecond is cut, as `Date.parse` does.
 */
export function parseZonedTime(text: string): number {
  const m = ZONED.exec(text)
  if (m === null) return Number.NaN
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [number, number, number, number, number, number]
  const offsetHours = m[8] === undefined ? Number(m[10]) : 0
  const offsetMinutes = m[8] === undefined ? Number(m[11]) : 0
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return Number.NaN
  if (offsetHours > 23 || offsetMinutes > 59) return Number.NaN
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'))
  const offsetMs = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000
  return ((daysFromCivil(year, month, day) * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + ms - offsetMs
}
