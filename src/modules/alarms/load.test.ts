import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { computeAlarmLoad, type ActivationRow } from './load.ts'

const T0 = Date.UTC(2026, 0, 5, 8, 0, 0)
const MIN = 60_000
const S = 1000

/**
 * A hand-built hour whose figures are known: a chattering alarm (3 activations in 40 s) in the first interval, a
 * flood of 11 + 11 activations over the second and third, 5 critical ones in the fifth, and one suppressed.
 */
function stream(): ActivationRow[] {
  const rows: ActivationRow[] = []
  const add = (instance_id: string, condition: string, priority: string, occurred_at: number, effect = 'activated') =>
    rows.push({ instance_id, condition, priority, occurred_at, effect })
  for (const s of [0, 20, 40]) add('P1', 'HI', 'high', T0 + s * S)
  for (let i = 1; i <= 11; i++) add('P2', `B${i}`, 'medium', T0 + 10 * MIN + i * S)
  for (let i = 1; i <= 11; i++) add('P2', `D${i}`, 'medium', T0 + 20 * MIN + i * S)
  for (let i = 1; i <= 5; i++) add('P3', `E${i}`, 'critical', T0 + 40 * MIN + i * MIN)
  add('P1', 'HI', 'high', T0 + 55 * MIN, 'suppressed')
  return rows.sort((a, b) => a.occurred_at - b.occurred_at)
}

describe('alarm load (ISA-18.2 / EEMUA 191 figures)', () => {
  it('rates per 10 minutes and per hour, peak, floods and time in flood come out as counted by hand', () => {
    const load = computeAlarmLoad(stream(), { from: T0, to: T0 + 60 * MIN, operatorPositions: 1 })
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
  })

  it('most frequent is the top 10 by activations with its share; chattering is 3 or more within 60 s', () => {
    const load = computeAlarmLoad(stream(), { from: T0, to: T0 + 60 * MIN, operatorPositions: 1 })
    assert.equal(load.mostFrequent.length, 10)
    assert.deepEqual(load.mostFrequent[0], { instanceId: 'P1', condition: 'HI', activations: 3, percentOfTotal: 10 })
    assert.deepEqual(load.mostFrequent[1], { instanceId: 'P2', condition: 'B1', activations: 1, percentOfTotal: 3.333 })
    assert.deepEqual(load.chattering, [{ instanceId: 'P1', condition: 'HI', activations: 3, maxInWindow: 3 }])
  })

  it('exactly 60 s between the first and third activation is not chattering (the window is open at 60 s)', () => {
    const rows = [0, 30, 60].map((s) => ({ instance_id: 'P', condition: 'C', priority: 'low', occurred_at: T0 + s * S, effect: 'activated' }))
    assert.deepEqual(computeAlarmLoad(rows, { from: T0, to: T0 + 10 * MIN, operatorPositions: 1 }).chattering, [])
  })

  it('rates are per operator position: two positions halve them and 11 in 10 minutes is no longer a flood', () => {
    const load = computeAlarmLoad(stream(), { from: T0, to: T0 + 60 * MIN, operatorPositions: 2 })
    assert.equal(load.averagePer10MinPerPosition, 2.5)
    assert.equal(load.peakPer10MinPerPosition, 5.5)
    assert.deepEqual(load.floods, [])
    assert.equal(load.percentTimeInFlood, 0)
  })

  it('a partial last interval counts for its real length in the time in flood', () => {
    const rows = Array.from({ length: 11 }, (_, i) => ({
      instance_id: 'P',
      condition: `C${i}`,
      priority: 'low',
      occurred_at: T0 + 10 * MIN + i * S,
      effect: 'activated',
    }))
    const load = computeAlarmLoad(rows, { from: T0, to: T0 + 15 * MIN, operatorPositions: 1 })
    assert.equal(load.intervals, 2)
    assert.equal(load.floods[0]!.end, new Date(T0 + 15 * MIN).toISOString())
    assert.equal(load.percentTimeInFlood, 33.333)
  })

  it('an empty period answers zeros, not NaN', () => {
    const load = computeAlarmLoad([], { from: T0, to: T0 + 60 * MIN, operatorPositions: 1 })
    assert.deepEqual([load.activations, load.averagePer10MinPerPosition, load.peakPer10MinPerPosition, load.percentTimeInFlood], [0, 0, 0, 0])
    assert.deepEqual(load.mostFrequent, [])
  })
})
