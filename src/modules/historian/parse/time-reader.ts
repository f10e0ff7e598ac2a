import { FIRST_ISO_MS, LAST_ISO_MS } from '../../../http/input-guard.ts'
import type { DateOrder } from './options.ts'
import { parseTimestamp } from './timestamps.ts'
import type { ParsedTime } from './timestamps.ts'
import { ZoneClock } from './zone-clock.ts'
import { quoted } from '../../../errors/quoted.ts'

/** Timestamp cell → UTC epoch ms, for one batch's date order and time zone. */
export class TimeReader {
  reason = ''
  readonly #order: DateOrder
  readonly #clock: ZoneClock
  readonly #parsed: ParsedTime = { wallMs: 0, offsetMs: Number.NaN }
  #lastText = ''
  #lastProblem: string | undefined = 'none yet'

  constructor(order: DateOrder, timeZone: string) {
    this.#order = order
    this.#clock = new ZoneClock(timeZone)
  }

  /**
   * UTC ms (integer), or NaN with `reason` set. `seriesKey` (the tag, or '' when a row shares
   * one time) orders repeated fall-back hours; `extraMs` (Citect's Milliseconds) adds to the wall time.
   */
  read(text: string, seriesKey: string, extraMs = 0): number {
    // Exports repeat a timestamp on consecutive rows (all tags of one scan): parse it once.
    if (text !== this.#lastText) {
      this.#lastText = text
      this.#lastProblem = parseTimestamp(text, this.#order, this.#parsed)
    }
    if (this.#lastProblem !== undefined) {
      this.reason = text.trim() === '' ? 'empty timestamp' : this.#lastProblem
      return Number.NaN
    }
    const { wallMs, offsetMs } = this.#parsed
    const utc = offsetMs === offsetMs ? wallMs + extraMs - offsetMs : this.#clock.toUtc(wallMs + extraMs, seriesKey)
    if (utc !== utc) this.reason = this.#clock.reason
    // A wall time of year 0000 or 9999 shifted by its zone's offset left the years every answer writes: stored, the
    // batch's time range could not be answered (a 500 after the samples were written).
    else if (utc < FIRST_ISO_MS || utc > LAST_ISO_MS) {
      this.reason = `${quoted(text)} is outside 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z once in UTC (an ISO 8601 year has four digits)`
      return Number.NaN
    }
    return utc
  }
}
