import { ALARM_PRIORITIES } from './lifecycle.ts'
import type { AlarmLoad } from './schemas.ts'

/** ISA-18.2 / EEMUA 191 figures are over 10-minute intervals. */
export const INTERVAL_MS = 10 * 60_000
/** ISA-18.2: more than 10 alarms in 10 minutes per operator position is an alarm flood. */
export const FLOOD_THRESHOLD = 10
/** Chattering: this many activations of one alarm within the window (a common ISA-18.2 rule of thumb: 3 in 60 s). */
export const CHATTER_THRESHOLD = 3
export const CHATTER_WINDOW_MS = 60_000
const TOP = 10

/** Annunciated activations in one 10-minute interval. */
export interface IntervalCount {
  /** The interval's index, counted from `from`. */
  interval: number
  activations: number
}

/** Activations of one effect (`activated`, annunciated, or `suppressed`, while shelved or out of service) and priority. */
export interface PriorityCount {
  effect: string
  priority: string
  activations: number
}

/** One alarm (instance and condition): its annunciated activations and the most of them within any CHATTER_WINDOW_MS. */
export interface AlarmActivations {
  instanceId: string
  condition: string
  activations: number
  maxInWindow: number
}

/**
 * The period's activations counted where they are stored (store.ts countActivations): one entry per non-empty
 * interval, per effect and priority, and per alarm; nothing here grows with the number of activations.
 */
export interface ActivationCounts {
  intervals: readonly IntervalCount[]
  priorities: readonly PriorityCount[]
  alarms: readonly AlarmActivations[]
}

const round = (x: number) => Math.round(x * 1000) / 1000
const iso = (ms: number) => new Date(ms).toISOString()

/**
 * The alarm-load report of a period [from, to) from its activation counts. Intervals are aligned to `from`; the last
 * may be partial and then counts for its real length in the time-in-flood share.
 */
export function computeAlarmLoad(counts: ActivationCounts, period: { from: number; to: number; operatorPositions: number }): AlarmLoad {
  const { from, to, operatorPositions: positions } = period
  const intervals = Math.ceil((to - from) / INTERVAL_MS)
  const perInterval = new Array<number>(intervals).fill(0)
  const byPriority: Record<string, number> = Object.fromEntries(ALARM_PRIORITIES.map((p) => [p, 0]))
  for (const c of counts.intervals) perInterval[c.interval] = c.activations
  let total = 0
  let suppressed = 0
  for (const c of counts.priorities) {
    if (c.effect !== 'activated') {
      suppressed += c.activations
      continue
    }
    total += c.activations
    if (c.priority in byPriority) byPriority[c.priority]! += c.activations
  }

  const floods: AlarmLoad['floods'] = []
  let floodedMs = 0
  perInterval.forEach((count, i) => {
    if (count / positions <= FLOOD_THRESHOLD) return
    const start = from + i * INTERVAL_MS
    const end = Math.min(start + INTERVAL_MS, to)
    floodedMs += end - start
    const last = floods[floods.length - 1]
    if (last !== undefined && Date.parse(last.end) === start) {
      last.end = iso(end)
      last.activations += count
      last.peakPer10Min = Math.max(last.peakPer10Min, count)
    } else {
      floods.push({ start: iso(start), end: iso(end), activations: count, peakPer10Min: count })
    }
  })

  const byCount = (a: AlarmActivations, b: AlarmActivations) =>
    b.activations - a.activations || a.instanceId.localeCompare(b.instanceId) || a.condition.localeCompare(b.condition)
  const mostFrequent = counts.alarms
    .toSorted(byCount)
    .slice(0, TOP)
    .map((t) => ({ instanceId: t.instanceId, condition: t.condition, activations: t.activations, percentOfTotal: round((t.activations / total) * 100) }))
  const chattering = counts.alarms
    .filter((t) => t.maxInWindow >= CHATTER_THRESHOLD)
    .map((t) => ({ instanceId: t.instanceId, condition: t.condition, activations: t.activations, maxInWindow: t.maxInWindow }))
    .sort((a, b) => b.maxInWindow - a.maxInWindow || byCount(a, b))

  return {
    from: iso(from),
    to: iso(to),
    operatorPositions: positions,
    activations: total,
    suppressedActivations: suppressed,
    intervals,
    activationsPer10Min: perInterval,
    averagePer10MinPerPosition: round(total / intervals / positions),
    averagePerHourPerPosition: round(total / ((to - from) / 3_600_000) / positions),
    peakPer10MinPerPosition: round(Math.max(0, ...perInterval) / positions),
    floodThresholdPer10Min: FLOOD_THRESHOLD,
    percentTimeInFlood: round((floodedMs / (to - from)) * 100),
    floods,
    byPriority: byPriority as AlarmLoad['byPriority'],
    mostFrequent,
    chatterWindowSeconds: CHATTER_WINDOW_MS / 1000,
    chatterThreshold: CHATTER_THRESHOLD,
    chattering,
  }
}
