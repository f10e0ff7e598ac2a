import type { DateOrder } from './options.ts'
import { parseTimestamp } from './timestamps.ts'
import type { ParsedTime } from './timestamps.ts'
import { ZoneClock } from './zone-clock.ts'

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
    if (offsetMs === offsetMs) return wallMs + extraMs - offsetMs
    const utc = this.#clock.toUtc(wallMs + extraMs, seriesKey)
    if (utc !== utc) this.reason = this.#clock.reason
    return utc
  }
}
