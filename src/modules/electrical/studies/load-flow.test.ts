import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LoadFlowCaseInvalid } from './load-flow-errors.ts'
import type { LoadFlowBus, LoadFlowCase } from './load-flow-case.ts'
import { matpowerCase } from './load-flow-matpower.ts'
import { solveLoadFlow, type LoadFlowResult } from './load-flow.ts'

function converged(result: LoadFlowResult): Extract<LoadFlowResult, { converged: true }> {
  assert.equal(result.converged, true, JSON.stringify(result))
  return result as Extract<LoadFlowResult, { converged: true }>
}

const within = (actual: number, expected: number, relative: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= relative * Math.abs(expected), `${what}: expected ${expected} ± ${relative * 100} %, got ${actual}`)

/** Every bus's branch flows add up to what the bus injects (generation − load − shunt), in MW and Mvar. */
function assertBalanced(study: LoadFlowCase, result: Extract<LoadFlowResult, { converged: true }>): void {
  const out = new Map(study.buses.map((b) => [b.id, [0, 0]]))
  study.branches.forEach((branch, k) => {
    const flow = result.branches[k]!
    out.get(branch.fromBusId)![0]! += flow.pFromMw
    out.get(branch.fromBusId)![1]! += flow.qFromMvar
    out.get(branch.toBusId)![0]! += flow.pToMw
    out.get(branch.toBusId)![1]! += flow.qToMvar
  })
  study.buses.forEach((bus, i) => {
    const { pGenMw, qGenMvar, vPu } = result.buses[i]!
    const [p, q] = out.get(bus.id)!
    assert.ok(Math.abs(pGenMw - (bus.pLoadMw ?? 0) - (bus.gShuntMw ?? 0) * vPu ** 2 - p!) < 1e-6, `P balance at bus ${bus.id}`)
    assert.ok(Math.abs(qGenMvar - (bus.qLoadMvar ?? 0) + (bus.bShuntMvar ?? 0) * vPu ** 2 - q!) < 1e-6, `Q balance at bus ${bus.id}`)
  })
  const losses = result.branches.reduce((sum, b) => sum + b.pFromMw + b.pToMw, 0)
  assert.ok(Math.abs(losses - result.lossMw) < 1e-9, 'the losses are the branches’ P in minus P out')
}

describe('load flow: IEEE 14-bus, meshed, with tap-changing transformers and PV buses (MATPOWER case14)', () => {
  const { study, busRows } = matpowerCase('case14.m')
  const result = converged(solveLoadFlow(study))

  it('converges in 4 Newton steps to the published voltages within 0.15 % and angles within 0.02°', () => {
    assert.equal(result.iterations, 4)
    assert.ok(result.maxMismatchMva <= 1e-6)
    result.buses.forEach((bus, i) => {
      within(bus.vPu, busRows[i]![7]!, 0.0015, `|V| at bus ${bus.id}`)
      assert.ok(Math.abs(bus.angleDeg - busRows[i]![8]!) <= 0.02, `angle at bus ${bus.id}: ${bus.angleDeg} vs ${busRows[i]![8]}`)
    })
  })

  it('the slack supplies the published 232.4 MW, so the losses are 272.4 − 259 = 13.4 MW; flows balance every bus', () => {
    within(result.buses[0]!.pGenMw, 232.4, 0.0001, 'slack P')
    within(result.lossMw, 13.4, 0.001, 'losses')
    assertBalanced(study, result)
  })

  it('branch flows at both ends match MATPOWER’s printed solution (1–2 and 1–5, MW and Mvar, to 0.01)', () => {
    const flows = (id: string) => {
      const b = result.branches.find((x) => x.id === id)!
      return [b.pFromMw, b.qFromMvar, b.pToMw, b.qToMvar, b.lossMw, b.lossMvar].map((v) => Math.round(v * 100) / 100)
    }
    assert.deepEqual(flows('1-2'), [156.88, -20.4, -152.59, 27.68, 4.3, 13.12])
    assert.deepEqual(flows('1-5'), [75.51, 3.85, -72.75, 2.23, 2.76, 11.41])
  })
})

describe('load flow: Baran & Wu 33-bus radial feeder (MATPOWER case33bw)', () => {
  const { study } = matpowerCase('case33bw.m', true)
  const result = converged(solveLoadFlow(study))

  it('losses 202.67 kW and 135.14 kvar and the lowest voltage 0.9131 pu at bus 18, as published, within 0.01 %', () => {
    assert.equal(result.iterations, 3)
    within(result.lossMw * 1000, 202.67, 0.0001, 'P losses, kW')
    within(result.lossMvar * 1000, 135.14, 0.0001, 'Q losses, kvar')
    const lowest = result.buses.reduce((a, b) => (b.vPu < a.vPu ? b : a))
    assert.equal(lowest.id, '18')
    within(lowest.vPu, 0.9131, 0.0001, '|V| at bus 18')
  })

  it('the substation supplies the 3 715 kW of load plus the losses, and flows balance every bus', () => {
    within(result.buses[0]!.pGenMw, 3.715 + result.lossMw, 1e-6, 'substation P')
    within(result.branches[0]!.pFromMw, result.buses[0]!.pGenMw, 1e-6, 'feeder head flow')
    assertBalanced(study, result)
  })
})

/** A slack bus feeding one PQ bus through one branch. */
function twoBus(branch: Partial<LoadFlowCase['branches'][number]> = {}, load: Partial<LoadFlowBus> = {}): LoadFlowCase {
  return {
    baseMva: 100,
    buses: [
      { id: 'grid', kind: 'slack', vSetPu: 1 },
      { id: 'load', kind: 'pq', ...load },
    ],
    branches: [{ id: 'feeder', fromBusId: 'grid', toBusId: 'load', rPu: 0.01, xPu: 0.1, ...branch }],
  }
}

describe('load flow: the bus and branch model', () => {
  const pvBus = (vSetPu: number, limits: Partial<LoadFlowBus>): LoadFlowCase => ({
    ...twoBus(),
    buses: [
      { id: 'grid', kind: 'slack', vSetPu: 1 },
      { id: 'gen', kind: 'pv', vSetPu, pLoadMw: 10, ...limits },
    ],
    branches: [{ id: 'feeder', fromBusId: 'grid', toBusId: 'gen', rPu: 0.01, xPu: 0.1 }],
  })

  it('a PV bus holds its set-point within its reactive limits, and is held at the limit it would pass (voltage off set-point)', () => {
    const free = converged(solveLoadFlow(pvBus(1.05, { qMinMvar: -100, qMaxMvar: 100 }))).buses[1]!
    assert.ok(Math.abs(free.vPu - 1.05) < 1e-12 && free.qGenMvar > 5 && free.qLimit === undefined)
    const high = converged(solveLoadFlow(pvBus(1.05, { qMaxMvar: 5 }))).buses[1]!
    assert.equal(high.qLimit, 'max')
    assert.ok(Math.abs(high.qGenMvar - 5) < 1e-6 && high.vPu < 1.05)
    const low = converged(solveLoadFlow(pvBus(0.95, { qMinMvar: -5 }))).buses[1]!
    assert.equal(low.qLimit, 'min')
    assert.ok(Math.abs(low.qGenMvar + 5) < 1e-6 && low.vPu > 0.95)
  })

  it('an unloaded transformer with tap 1.05 and a 30° shift answers V = 1/1.05 pu at −30° on its to side', () => {
    const result = converged(solveLoadFlow(twoBus({ tapRatio: 1.05, shiftDeg: 30 })))
    assert.ok(Math.abs(result.buses[1]!.vPu - 1 / 1.05) < 1e-9)
    assert.ok(Math.abs(result.buses[1]!.angleDeg + 30) < 1e-9)
    assert.ok(Math.abs(result.branches[0]!.pFromMw) < 1e-9)
  })

  it('a lossless line carrying 10 MW to a unity-power-factor load: P out = P in, loading against its 20 MVA rating', () => {
    const result = converged(solveLoadFlow(twoBus({ rPu: 0, xPu: 0.1, ratingMva: 20 }, { pLoadMw: 10 })))
    const [feeder] = result.branches
    assert.ok(Math.abs(feeder!.pFromMw - 10) < 1e-9 && Math.abs(feeder!.pToMw + 10) < 1e-9)
    assert.equal(result.lossMw, 0)
    assert.ok(Math.abs(feeder!.loadingPercent! - (100 * Math.hypot(feeder!.pFromMw, feeder!.qFromMvar)) / 20) < 1e-9)
    assert.ok(feeder!.loadingPercent! > 50 && feeder!.loadingPercent! < 51)
    assert.equal(converged(solveLoadFlow(twoBus())).branches[0]!.loadingPercent, undefined)
  })

  it('two islands, each with its own slack, are solved together and independently', () => {
    const one = twoBus({}, { pLoadMw: 20, qLoadMvar: 5 })
    const other: LoadFlowCase = {
      baseMva: 100,
      buses: [...one.buses, ...one.buses.map((b) => ({ ...b, id: `${b.id}-2` }))],
      branches: [...one.branches, ...one.branches.map((b) => ({ ...b, id: 'feeder-2', fromBusId: 'grid-2', toBusId: 'load-2' }))],
    }
    const [alone, both] = [converged(solveLoadFlow(one)), converged(solveLoadFlow(other))]
    assert.ok(Math.abs(both.buses[3]!.vPu - alone.buses[1]!.vPu) < 1e-12)
    assert.ok(Math.abs(both.lossMw - 2 * alone.lossMw) < 1e-12)
  })
})

describe('load flow: a case that does not converge says so', () => {
  const { study } = matpowerCase('case14.m')
  const scaled = (k: number): LoadFlowCase => ({
    ...study,
    buses: study.buses.map((b) => ({ ...b, pLoadMw: b.pLoadMw! * k, qLoadMvar: b.qLoadMvar! * k })),
  })

  it('case14 at 5 × its load (past the nose of the PV curve): converged false, IterationLimit after 20 steps, the worst bus named', () => {
    assert.equal(converged(solveLoadFlow(scaled(4))).converged, true)
    const result = solveLoadFlow(scaled(5))
    assert.equal(result.converged, false)
    assert.ok(!result.converged && result.reason === 'IterationLimit' && result.iterations === 20)
    assert.ok(!result.converged && study.buses.some((b) => b.id === result.worstBusId) && result.maxMismatchMva > 1)
    const short = solveLoadFlow(study, { maxIterations: 2 })
    assert.ok(!short.converged && short.reason === 'IterationLimit' && short.iterations === 2)
  })

  it('1 000 000 MW on a 100 MVA line: Diverged; a branch of 10²⁰⁰ pu reactance: SingularJacobian at step 0', () => {
    const diverged = solveLoadFlow(twoBus({}, { pLoadMw: 1e6, qLoadMvar: 1e6 }))
    assert.ok(!diverged.converged && diverged.reason === 'Diverged' && diverged.worstBusId === 'load')
    const singular = solveLoadFlow(twoBus({ rPu: 0, xPu: 1e200 }, { pLoadMw: 1 }))
    assert.ok(!singular.converged && singular.reason === 'SingularJacobian' && singular.iterations === 0)
  })
})

describe('load flow: a case it cannot solve is refused naming the bus or branch, the field and the rule', () => {
  const refused = (study: LoadFlowCase, expected: Record<string, string>) => {
    assert.throws(
      () => solveLoadFlow(study),
      (err: unknown) => {
        assert.ok(err instanceof LoadFlowCaseInvalid)
        assert.equal(err.code, 'UnprocessableEntity')
        for (const [key, value] of Object.entries(expected)) assert.equal(err.extensions?.[key], value, key)
        return true
      },
    )
  }
  const base = twoBus()
  const withBus = (bus: LoadFlowBus) => ({ ...base, buses: [...base.buses, bus] })

  it('each rule', () => {
    refused({ ...base, baseMva: 0 }, { busId: 'grid', field: 'baseMva' })
    refused(withBus({ id: 'load', kind: 'pq' }), { busId: 'load', field: 'id' })
    refused(withBus({ id: 'gen', kind: 'pv' }), { busId: 'gen', field: 'vSetPu' })
    refused({ ...base, buses: [{ id: 'grid', kind: 'slack', vSetPu: -1 }, base.buses[1]!] }, { busId: 'grid', field: 'vSetPu' })
    refused(withBus({ id: 'x', kind: 'pq', pLoadMw: Number.NaN }), { busId: 'x', field: 'pLoadMw' })
    refused(withBus({ id: 'alone', kind: 'pq' }), { busId: 'alone', field: 'kind', rule: 'is in an island without a slack bus' })
    refused(twoBus({ toBusId: 'nowhere' }), { branchId: 'feeder', field: 'toBusId' })
    refused(twoBus({ fromBusId: 'nowhere' }), { branchId: 'feeder', field: 'fromBusId' })
    refused(twoBus({ toBusId: 'grid' }), { branchId: 'feeder', field: 'toBusId', rule: 'equals fromBusId' })
    refused(twoBus({ rPu: 0, xPu: 0 }), { branchId: 'feeder', field: 'xPu' })
    refused(twoBus({ xPu: Number.POSITIVE_INFINITY }), { branchId: 'feeder', field: 'xPu' })
    refused(twoBus({ tapRatio: 0 }), { branchId: 'feeder', field: 'tapRatio' })
    refused(twoBus({ ratingMva: -5 }), { branchId: 'feeder', field: 'ratingMva' })
    refused({ ...base, branches: [...base.branches, base.branches[0]!] }, { branchId: 'feeder', field: 'id' })
    refused(withBus({ id: 'x', kind: 'pq', qMaxMvar: 5 }), { busId: 'x', field: 'qMaxMvar', rule: 'is only taken on a pv bus' })
    refused(withBus({ id: 'g', kind: 'pv', vSetPu: 1, qMinMvar: 5, qMaxMvar: 4 }), { busId: 'g', field: 'qMaxMvar' })
  })
})
