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

export interface ActivationRow {
  instance_id: string
  condition: string
  priority: string
  occurred_at: number
  /** `activated` (annunciated) or `suppressed` (while shelved or out of service). */
  effect: string
}

const round = (x: number) => Math.round(x * 1000) / 1000
const iso = (ms: number) => new Date(ms).toISOString()

/**
 * The alarm-load report of a period [from, to) from its activations. Intervals are aligned to `from`; the last
 * may be partial and then counts for its real length in the time-in-flood share.
 */
export function computeAlarmLoad(rows: ActivationRow[], period: { from: number; to: number; operatorPositions: number }): AlarmLoad {
  const { from, to, operatorPositions: positions } = period
  const annunciated = rows.filter((r) => r.effect === 'activated')
  const intervals = Math.ceil((to - from) / INTERVAL_MS)
  const perInterval = new Array<number>(intervals).fill(0)
  const byTag = new Map<string, { instanceId: string; condition: string; times: number[] }>()
  const byPriority: Record<string, number> = Object.fromEntries(ALARM_PRIORITIES.map((p) => [p, 0]))
  for (const r of annunciated) {
    perInterval[Math.floor((r.occurred_at - from) / INTERVAL_MS)]! += 1
    if (r.priority in byPriority) byPriority[r.priority]! += 1
    const key = `${r.instance_id}\u0000${r.condition}`
    const tag = byTag.get(key) ?? { instanceId: r.instance_id, condition: r.condition, times: [] }
    tag.times.push(r.occurred_at)
    byTag.set(key, tag)
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

  const total = annunciated.length
  const tags = [...byTag.values()]
  const byCount = (a: { activations: number; instanceId: string; condition: string }, b: typeof a) =>
    b.activations - a.activations || a.instanceId.localeCompare(b.instanceId) || a.condition.localeCompare(b.condition)
  const mostFrequent = tags
    .map((t) => ({ instanceId: t.instanceId, condition: t.condition, activations: t.times.length }))
    .sort(byCount)
    .slice(0, TOP)
    .map((t) => ({ ...t, percentOfTotal: round((t.activations / total) * 100) }))
  const chattering = tags
    .map((t) => ({ instanceId: t.instanceId, condition: t.condition, activations: t.times.length, maxInWindow: maxInWindow(t.times) }))
    .filter((t) => t.maxInWindow >= CHATTER_THRESHOLD)
    .sort((a, b) => b.maxInWindow - a.maxInWindow || byCount(a, b))

  return {
    from: iso(from),
    to: iso(to),
    operatorPositions: positions,
    activations: total,
    suppressedActivations: rows.length - total,
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

/** Most activations within any window of CHATTER_WINDOW_MS (times sorted ascending). */
function maxInWindow(times: number[]): number {
  let best = 0
  let start = 0
  for (let end = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= CHATTER_WINDOW_MS) start++
    best = Math.max(best, end - start + 1)
  }
  return best
}
