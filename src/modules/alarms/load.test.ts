import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { TestContext } from 'node:test'
import { harness, testDialects, type TestDialect } from '../../../test/harness.ts'
import { ALARM_PRIORITIES } from './lifecycle.ts'
import { CHATTER_WINDOW_MS, computeAlarmLoad, INTERVAL_MS, type ActivationCounts, type PriorityCount } from './load.ts'
import { countActivations } from './store.ts'

const T0 = Date.UTC(2026, 0, 5, 8, 0, 0)
const MIN = 60_000
const S = 1000
const DAY = 86_400_000

interface Activation {
  instance_id: string
  condition: string
  priority: string
  occurred_at: number
  effect: string
}

const at = (instance_id: string, condition: string, priority: string, occurred_at: number, effect = 'activated'): Activation => ({
  instance_id,
  condition,
  priority,
  occurred_at,
  effect,
})

/**
 * A hand-built hour whose figures are known: a chattering alarm (3 activations in 40 s) in the first interval, a
 * flood of 11 + 11 activations over the second and third, 5 critical ones in the fifth, and one suppressed.
 */
function hour(): Activation[] {
  const rows: Activation[] = []
  for (const s of [0, 20, 40]) rows.push(at('P1', 'HI', 'high', T0 + s * S))
  for (let i = 1; i <= 11; i++) rows.push(at('P2', `B${i}`, 'medium', T0 + 10 * MIN + i * S))
  for (let i = 1; i <= 11; i++) rows.push(at('P2', `D${i}`, 'medium', T0 + 20 * MIN + i * S))
  for (let i = 1; i <= 5; i++) rows.push(at('P3', `E${i}`, 'critical', T0 + 40 * MIN + i * MIN))
  rows.push(at('P1', 'HI', 'high', T0 + 55 * MIN, 'suppressed'))
  return rows
}

/** A site S1 (and S2) of a fresh organisation whose alarm events are written directly, and its load report as the service computes it. */
async function site(t: TestContext, dialect: TestDialect) {
  const h = await harness(t, dialect)
  const { org, key } = await h.orgWithKey('admin')
  const admin = (url: string, payload?: object) => h.inject({ org, apiKey: key }, { method: payload ? 'POST' : 'GET', url, payload })
  for (const code of ['S1', 'S2']) assert.equal((await admin('/api/sites', { code, name: code })).statusCode, 201)
  let n = 0
  return {
    admin,
    async insert(rows: readonly Activation[], siteCode = 'S1') {
      for (let i = 0; i < rows.length; i += 500) {
        const batch = rows.slice(i, i + 500).map((r) => ({
          ...r,
          org_id: org.id,
          site_code: siteCode,
          event_id: `e${n++}`,
          is_active: 1,
          received_at: r.occurred_at,
        }))
        await h.handle.db.insertInto('alarm_events').values(batch).execute()
      }
    },
    counts: (from: number, to: number) => countActivations(h.handle.db, org.id, 'S1', { from, to, intervalMs: INTERVAL_MS, windowMs: CHATTER_WINDOW_MS }),
    async load(period: { from: number; to: number; operatorPositions: number }) {
      return computeAlarmLoad(await this.counts(period.from, period.to), period)
    },
  }
}

/** The reference: the counts as the report made them before they moved into SQL, with every activation in memory. */
function countInMemory(rows: readonly Activation[], from: number, to: number): ActivationCounts {
  const inPeriod = rows
    .filter((r) => r.occurred_at >= from && r.occurred_at < to && (r.effect === 'activated' || r.effect === 'suppressed'))
    .sort((a, b) => a.occurred_at - b.occurred_at)
  const intervals = new Map<number, number>()
  const priorities = new Map<string, PriorityCount>()
  const alarms = new Map<string, { instanceId: string; condition: string; times: number[] }>()
  for (const r of inPeriod) {
    const byPriority = priorities.get(`${r.effect} ${r.priority}`) ?? { effect: r.effect, priority: r.priority, activations: 0 }
    byPriority.activations += 1
    priorities.set(`${r.effect} ${r.priority}`, byPriority)
    if (r.effect !== 'activated') continue
    const interval = Math.floor((r.occurred_at - from) / INTERVAL_MS)
    intervals.set(interval, (intervals.get(interval) ?? 0) + 1)
    const tag = `${r.instance_id}\u0000${r.condition}`
    const alarm = alarms.get(tag) ?? { instanceId: r.instance_id, condition: r.condition, times: [] }
    alarm.times.push(r.occurred_at)
    alarms.set(tag, alarm)
  }
  return {
    intervals: [...intervals].map(([interval, activations]) => ({ interval, activations })),
    priorities: [...priorities.values()],
    alarms: [...alarms.values()].map((a) => ({
      instanceId: a.instanceId,
      condition: a.condition,
      activations: a.times.length,
      maxInWindow: maxInWindow(a.times),
    })),
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

/** A seeded generator (mulberry32), so the month below is the same on every run. */
function random(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296
  }
}

/**
 * 31 days of a busy site, about 40 000 activations: a background of 400 alarms (mixed-case names, so ties sort as
 * localeCompare does), 300 floods of up to 60 in 10 minutes, chattering bursts (and bursts exactly 60 s apart, which
 * are not), repeats at the same millisecond, suppressed ones, other effects, and rows on both edges of the period.
 */
function month(from: number, to: number): Activation[] {
  const next = random(31)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!
  const instances = Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? `p${i}` : i % 3 === 1 ? `P${i}` : `Pump-${String.fromCharCode(97 + (i % 26))}${i}`))
  const conditions = ['HI', 'hi', 'LO', 'HH', 'Trip', 'trip', 'FAULT', 'COMM', 'b', 'B']
  const effect = () => {
    const x = next()
    return x < 0.9 ? 'activated' : x < 0.97 ? 'suppressed' : pick(['returned', 'none'])
  }
  const priority = () => pick(ALARM_PRIORITIES)
  const rows: Activation[] = []
  for (let i = 0; i < 30_000; i++) rows.push(at(pick(instances), pick(conditions), priority(), from + Math.floor(next() * (to - from)), effect()))
  for (let f = 0; f < 300; f++) {
    const start = from + Math.floor(next() * (to - from - INTERVAL_MS))
    const size = 5 + Math.floor(next() * 56)
    for (let i = 0; i < size; i++) rows.push(at(pick(instances), pick(conditions), priority(), start + Math.floor(next() * INTERVAL_MS), effect()))
  }
  for (let c = 0; c < 400; c++) {
    const [instance, condition, start] = [pick(instances), pick(conditions), from + Math.floor(next() * (to - from - 10 * MIN))]
    const gap = c % 4 === 0 ? 30 * S : Math.floor(next() * 25 * S)
    const repeats = 2 + Math.floor(next() * 5)
    for (let i = 0; i < repeats; i++) rows.push(at(instance, condition, priority(), start + i * gap, c % 7 === 0 ? 'suppressed' : 'activated'))
  }
  for (let i = 0; i < 200; i++) {
    const time = from + Math.floor(next() * (to - from))
    rows.push(at('P1', 'HI', 'high', time), at('P1', 'HI', 'high', time))
  }
  rows.push(at('P2', 'HI', 'low', from), at('P2', 'HI', 'low', to - 1), at('P2', 'HI', 'low', to), at('P2', 'HI', 'low', from - 1))
  return rows
}

for (const dialect of testDialects()) {
  describe(`${dialect}: alarm load (ISA-18.2 / EEMUA 191 figures), counted in the database`, () => {
    it('rates per 10 minutes and per hour, peak, floods and time in flood come out as counted by hand', async (t) => {
      const s = await site(t, dialect)
      await s.insert(hour())
      const load = await s.load({ from: T0, to: T0 + 60 * MIN, operatorPositions: 1 })
      assert.equal(load.activations, 30)
      assert.equal(load.suppressedActivations, 1)
      assert.equal(load.intervals, 6)
      assert.deepEqual(load.activationsPer10Min, [3, 11, 11, 0, 5, 0])
      assert.equal(load.averagePer10MinPerPosition, 5)
      assert.equal(load.averagePerHourPerPosition, 30)
      assert.equal(load.peakPer10MinPerPosition, 11)
      assert.deepEqual(load.floods, [
        { start: new Date(T0 + 10 * MIN).toISOString(), end: new Date(T0 + 30 * MIN).toISOString(), activations: 22, peakPer10Min: 11 },
      ])
      assert.equal(load.percentTimeInFlood, 33.333)
      assert.deepEqual(load.byPriority, { critical: 5, high: 3, medium: 22, low: 0 })
      // Most frequent is the top 10 by activations with its share; chattering is 3 or more within 60 s.
      assert.equal(load.mostFrequent.length, 10)
      assert.deepEqual(load.mostFrequent[0], { instanceId: 'P1', condition: 'HI', activations: 3, percentOfTotal: 10 })
      assert.deepEqual(load.mostFrequent[1], { instanceId: 'P2', condition: 'B1', activations: 1, percentOfTotal: 3.333 })
      assert.deepEqual(load.chattering, [{ instanceId: 'P1', condition: 'HI', activations: 3, maxInWindow: 3 }])
      // Rates are per operator position: two positions halve them and 11 in 10 minutes is no longer a flood.
      const two = await s.load({ from: T0, to: T0 + 60 * MIN, operatorPositions: 2 })
      assert.deepEqual([two.averagePer10MinPerPosition, two.peakPer10MinPerPosition, two.floods, two.percentTimeInFlood], [2.5, 5.5, [], 0])
    })

    it('exactly 60 s between the first and third activation is not chattering (the window is open at 60 s); 59.999 s is', async (t) => {
      const s = await site(t, dialect)
      await s.insert([0, 30, 60].map((sec) => at('P', 'C', 'low', T0 + sec * S)))
      await s.insert([0, 30_000, 59_999].map((ms) => at('Q', 'C', 'low', T0 + ms)))
      assert.deepEqual((await s.load({ from: T0, to: T0 + 10 * MIN, operatorPositions: 1 })).chattering, [
        { instanceId: 'Q', condition: 'C', activations: 3, maxInWindow: 3 },
      ])
    })

    it('a partial last interval counts for its real length in the time in flood', async (t) => {
      const s = await site(t, dialect)
      await s.insert(Array.from({ length: 11 }, (_, i) => at('P', `C${i}`, 'low', T0 + 10 * MIN + i * S)))
      const load = await s.load({ from: T0, to: T0 + 15 * MIN, operatorPositions: 1 })
      assert.equal(load.intervals, 2)
      assert.equal(load.floods[0]!.end, new Date(T0 + 15 * MIN).toISOString())
      assert.equal(load.percentTimeInFlood, 33.333)
    })

    it('an empty period answers zeros, not NaN', async (t) => {
      const s = await site(t, dialect)
      const load = await s.load({ from: T0, to: T0 + 60 * MIN, operatorPositions: 1 })
      assert.deepEqual([load.activations, load.averagePer10MinPerPosition, load.peakPer10MinPerPosition, load.percentTimeInFlood], [0, 0, 0, 0])
      assert.deepEqual(load.mostFrequent, [])
    })

    it('31 days of about 40 000 activations: the report answers what counting every activation in memory answered, from rows that grow with intervals and alarms only', async (t) => {
      const s = await site(t, dialect)
      const [from, to] = [T0, T0 + 31 * DAY]
      const rows = month(from, to)
      await s.insert(rows)
      await s.insert(rows.slice(0, 5_000), 'S2')
      const q = `from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`
      for (const operatorPositions of [1, 3]) {
        const res = await s.admin(`/api/sites/S1/alarms/load?${q}&operatorPositions=${operatorPositions}`)
        assert.equal(res.statusCode, 200, res.body)
        const expected = computeAlarmLoad(countInMemory(rows, from, to), { from, to, operatorPositions })
        assert.deepEqual(res.json(), expected)
        assert.ok(expected.floods.length > 0 && expected.chattering.length > 0, 'the month has floods and chattering alarms')
      }
      // By construction, memory holds the statement's rows: one per non-empty interval (4 464 at most in 31 days), per effect and priority, and per alarm.
      const counts = await s.counts(from, to)
      const held = counts.intervals.length + counts.priorities.length + counts.alarms.length
      const alarms = new Set(rows.map((r) => `${r.instance_id}\u0000${r.condition}`)).size
      assert.ok(
        counts.intervals.length <= 31 * 144 && counts.priorities.length <= 2 * ALARM_PRIORITIES.length && counts.alarms.length <= alarms,
        `${held} rows`,
      )
    })
  })
}
