import { daysFromCivil, formatWall } from './calendar.ts'

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000
const MAX_CACHED_HOURS = 100_000

const SINGLE = 0
const OVERLAP = 1
const GAP = 2
const MIXED = 3

/** How the zone treats one local hour. */
interface HourInfo {
  kind: typeof SINGLE | typeof OVERLAP | typeof GAP | typeof MIXED
  /** Offset (ms east of UTC) of the earlier instant; the only one for SINGLE. */
  early: number
  /** Offset of the later instant of a repeated (fall-back) wall time. */
  late: number
}

interface SeriesState {
  day: number
  lastWall: number
  takesLater: boolean
}

/**
 * Converts wall-clock times of one IANA zone to UTC with `Intl.DateTimeFormat` only.
 *
 * Speed: the zone is asked once per local hour, not per row; the answer is cached. An hour
 * whose two ends disagree (a DST edge) is marked and resolved exactly per row.
 * A spring-forward gap time is refused (NaN, `reason` set). A fall-back repeated time is
 * resolved by row order per series (a tag): its first occurrence takes the earlier offset;
 * once that series goes backwards in wall time within the repeated hour, or repeats the wall
 * time it just had (an export that lists 02:30 twice, once for each pass), it takes the later
 * offset for the rest of that overlap: both samples are kept, in file order.
 */
export class ZoneClock {
  reason = ''
  readonly timeZone: string
  readonly #format: Intl.DateTimeFormat
  readonly #isUtc: boolean
  readonly #hours = new Map<number, HourInfo>()
  readonly #series = new Map<string, SeriesState>()
  #lastHour = Number.NaN
  #lastInfo: HourInfo = { kind: SINGLE, early: 0, late: 0 }

  constructor(timeZone: string) {
    this.#format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    this.timeZone = this.#format.resolvedOptions().timeZone
    this.#isUtc = this.timeZone === 'UTC' || this.timeZone === 'Etc/UTC'
  }

  /** UTC ms of a wall time in this zone, or NaN (with `reason`) for a time the clocks skipped. */
  toUtc(wallMs: number, seriesKey: string): number {
    if (this.#isUtc) return wallMs
    const hour = Math.floor(wallMs / HOUR_MS)
    const info = hour === this.#lastHour ? this.#lastInfo : this.#hourInfo(hour)
    if (info.kind === SINGLE) return wallMs - info.early
    if (info.kind === OVERLAP) return this.#pick(wallMs, seriesKey, info.early, info.late)
    if (info.kind === GAP) return this.#gap(wallMs)
    const exact = this.#resolve(wallMs)
    if (exact.kind === SINGLE) return wallMs - exact.early
    if (exact.kind === OVERLAP) return this.#pick(wallMs, seriesKey, exact.early, exact.late)
    return this.#gap(wallMs)
  }

  /** Offset of the zone (ms east of UTC) at a UTC instant. */
  offsetAt(utcMs: number): number {
    const second = Math.floor(utcMs / 1000) * 1000
    let y = 0,
      mo = 0,
      d = 0,
      h = 0,
      mi = 0,
      s = 0,
      isBc = false
    for (const part of this.#format.formatToParts(second)) {
      if (part.type === 'year') y = Number(part.value)
      else if (part.type === 'era') isBc = part.value === 'BC'
      else if (part.type === 'month') mo = Number(part.value)
      else if (part.type === 'day') d = Number(part.value)
      else if (part.type === 'hour') h = Number(part.value)
      else if (part.type === 'minute') mi = Number(part.value)
      else if (part.type === 'second') s = Number(part.value)
    }
    // Not Date.UTC: it reads a year 0-99 as 1900-1999. The year is the era's (1 BC is year 0).
    return daysFromCivil(isBc ? 1 - y : y, mo, d) * DAY_MS + h * HOUR_MS + mi * 60_000 + s * 1000 - second
  }

  #hourInfo(hour: number): HourInfo {
    let info = this.#hours.get(hour)
    if (info === undefined) {
      const start = this.#resolve(hour * HOUR_MS)
      const end = this.#resolve(hour * HOUR_MS + HOUR_MS - 1)
      const same = start.kind === end.kind && start.early === end.early && start.late === end.late
      info = same ? start : { kind: MIXED, early: 0, late: 0 }
      if (this.#hours.size >= MAX_CACHED_HOURS) this.#hours.clear()
      this.#hours.set(hour, info)
    }
    this.#lastHour = hour
    this.#lastInfo = info
    return info
  }

  // Offsets a day either side bracket at most one transition (true of every real zone);
  // each candidate instant is kept only if the zone maps it back to the same wall time.
  #resolve(wallMs: number): HourInfo {
    const before = this.offsetAt(wallMs - DAY_MS)
    const after = this.offsetAt(wallMs + DAY_MS)
    const beforeFits = this.offsetAt(wallMs - before) === before
    if (before === after) {
      if (beforeFits) return { kind: SINGLE, early: before, late: before }
      const guess = this.offsetAt(wallMs - before)
      return this.offsetAt(wallMs - guess) === guess ? { kind: SINGLE, early: guess, late: guess } : { kind: GAP, early: before, late: after }
    }
    const afterFits = this.offsetAt(wallMs - after) === after
    if (beforeFits && afterFits) {
      // The larger offset gives the earlier UTC instant.
      return { kind: OVERLAP, early: Math.max(before, after), late: Math.min(before, after) }
    }
    if (beforeFits) return { kind: SINGLE, early: before, late: before }
    if (afterFits) return { kind: SINGLE, early: after, late: after }
    return { kind: GAP, early: before, late: after }
  }

  #pick(wallMs: number, seriesKey: string, early: number, late: number): number {
    const day = Math.floor(wallMs / DAY_MS)
    const state = this.#series.get(seriesKey)
    if (state === undefined || state.day !== day) {
      this.#series.set(seriesKey, { day, lastWall: wallMs, takesLater: false })
      return wallMs - early
    }
    if (!state.takesLater && wallMs <= state.lastWall) state.takesLater = true
    state.lastWall = wallMs
    return wallMs - (state.takesLater ? late : early)
  }

  #gap(wallMs: number): number {
    this.reason = `local time ${formatWall(wallMs)} does not exist in ${this.timeZone} (skipped by the spring-forward change)`
    return Number.NaN
  }
}
