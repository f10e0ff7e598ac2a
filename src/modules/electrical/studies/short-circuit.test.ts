import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { compareEdges, compareIds } from '../rows.ts'
import { buildGraph, type ElectricalEdge, type ElectricalNode } from '../topology.ts'
import { StudyDataMissing, StudyTooLarge, StudyTooManySources, TooManyContributions, type MissingStudyData } from '../errors.ts'
import { cableFromSize } from './cable-table.ts'
import { MAX_LISTED_CONTRIBUTIONS, MAX_SOURCE_SHARES, MAX_STUDY_BUSES, shortCircuitStudy } from './short-circuit.ts'

interface Expected {
  lvTolerancePercent: 6 | 10
  busId: string
  ikssMaxKa: number
  ipKa?: number
  ikssMinKa?: number
}
const fixture = JSON.parse(readFileSync(new URL('../../../../test/fixtures/electrical/short-circuit-pandapower.json', import.meta.url), 'utf8')) as {
  cases: Array<{ name: string; network: { nodes: ElectricalNode[]; edges: ElectricalEdge[] }; expected: Expected[] }>
}

function graphOf(network: { nodes: readonly ElectricalNode[]; edges: readonly ElectricalEdge[] }) {
  const nodes = [...network.nodes].sort((a, b) => compareIds(a.id, b.id))
  const edges = [...network.edges].sort((a, b) =>
    compareEdges(
      { source_id: a.sourceId, target_id: a.targetId, edge_type: a.edgeType },
      { source_id: b.sourceId, target_id: b.targetId, edge_type: b.edgeType },
    ),
  )
  return buildGraph(nodes, edges)
}

/** Within 1 % of the published value (the bar); the values printed on failure. */
function within1Percent(actual: number, expected: number, what: string) {
  assert.ok(Math.abs(actual - expected) <= 0.01 * expected, `${what}: ${actual} vs ${expected}`)
}

/** A 400 V feeder: a grid (10 MVA max, 8 min, R/X 0.1) then `count - 1` buses in a row, 10 m of 0.3 + j0.08 Ω/km apart. */
const bus = (i: number) => `B${String(i).padStart(5, '0')}`
function feeder(count: number) {
  return {
    nodes: [
      { id: bus(0), nodeType: 0, ratedVoltageV: 400, study: { scPowerMaxMva: 10, scPowerMinMva: 8, rxRatio: 0.1 } },
      ...Array.from({ length: count - 1 }, (_, i) => ({
        id: bus(i + 1),
        nodeType: 3,
        ratedVoltageV: 400,
        cableLengthM: 10,
        study: { rOhmPerKm: 0.3, xOhmPerKm: 0.08 },
      })),
    ],
    edges: Array.from({ length: count - 1 }, (_, i) => ({ sourceId: bus(i), targetId: bus(i + 1), edgeType: 0 })),
  }
}

describe('short-circuit study (IEC 60909-0) against pandapower reference values', () => {
  for (const c of fixture.cases) {
    it(c.name, () => {
      for (const tolerance of [6, 10] as const) {
        const expected = c.expected.filter((e) => e.lvTolerancePercent === tolerance)
        if (expected.length === 0) continue
        const result = shortCircuitStudy(graphOf(c.network), { lvTolerancePercent: tolerance, fHz: 50 })
        for (const e of expected) {
          const bus = result.buses.find((b) => b.busId === e.busId)
          assert.ok(bus, `bus ${e.busId} in ${result.buses.map((b) => b.busId).join(', ')}`)
          within1Percent(bus.ikssMaxKa, e.ikssMaxKa, `${e.busId} I″k max at ${tolerance} %`)
          if (e.ipKa !== undefined) within1Percent(bus.ipKa, e.ipKa, `${e.busId} ip at ${tolerance} %`)
          if (e.ikssMinKa !== undefined) within1Percent(bus.ikssMinKa, e.ikssMinKa, `${e.busId} I″k min at ${tolerance} %`)
        }
      }
    })
  }

  it("contributions: each source's current into the fault through its own impedance, largest first; the assumptions stated", () => {
    const motorCase = fixture.cases[1]!
    const result = shortCircuitStudy(graphOf(motorCase.network), { lvTolerancePercent: 10, fHz: 50 })
    assert.deepEqual(
      result.buses.map((b) => [b.busId, b.kappaMethod, b.contributions.map((s) => s.sourceId)]),
      [
        ['B1', 'radial', ['B1', 'M']],
        ['B2', 'radial', ['M', 'B1']],
        ['B3', 'radial', ['M', 'B1']],
      ],
    )
    // At B1 the grid alone gives S″kQ/(√3·Un) = 10 MVA/(√3·0.4 kV); the motor adds the rest.
    const b1 = result.buses[0]!
    within1Percent(b1.contributions[0]!.ikssKa, 10 / (Math.sqrt(3) * 0.4), 'grid share at B1')
    assert.ok(b1.contributions[1]!.ikssKa > 0.5 && b1.contributions[1]!.ikssKa < 1, `motor share at B1: ${b1.contributions[1]!.ikssKa}`)
    // Minimum case by hand: no motor, cmin 0.95, ZQmin = 0.95·0.4²/8 Ω at R/X 0.1, plus the 1 km cable 0.32 + j0.07 Ω.
    const xq = (0.95 * 0.4 ** 2) / 8 / Math.sqrt(1.01)
    const minB2 = (0.95 * 0.4) / (Math.sqrt(3) * Math.hypot(0.1 * xq + 0.32, xq + 0.07))
    assert.ok(Math.abs(result.buses[1]!.ikssMinKa - minB2) < 1e-9, `${result.buses[1]!.ikssMinKa} vs ${minB2}`)
    assert.equal(result.assumed.conductorTemperatureC, 20)
    assert.deepEqual(result.assumed.cFactors, { lv: { max: 1.1, min: 0.95 }, mvHv: { max: 1.1, min: 1 } })
  })

  it('a meshed part takes κ by method C and KT is stated for each transformer', () => {
    const result = shortCircuitStudy(graphOf(fixture.cases[0]!.network), { lvTolerancePercent: 10, fHz: 50 })
    assert.deepEqual(
      result.buses.map((b) => [b.busId, b.nodeIds, b.kappaMethod]),
      [
        ['B1A', ['B1A', 'B1B', 'CB'], 'C'],
        ['B2', ['B2'], 'C'],
      ],
    )
    // KT = 0.95·1.10/(1 + 0.6·xT), xT = √(6² − 0.5²) % = 0.05979.
    assert.deepEqual(
      result.assumed.correctionFactors.map((f) => [f.nodeId, f.factor, Number(f.value.toFixed(6))]),
      [
        ['T1', 'KT', Number(((0.95 * 1.1) / (1 + 0.6 * Math.sqrt(0.06 ** 2 - 0.005 ** 2))).toFixed(6))],
        ['T2', 'KT', Number(((0.95 * 1.1) / (1 + 0.6 * Math.sqrt(0.06 ** 2 - 0.005 ** 2))).toFixed(6))],
      ],
    )
  })

  it('a cable without rOhmPerKm/xOhmPerKm takes the cable table for its cableSize, says so, and a size it cannot read is a 422 naming the node', () => {
    assert.deepEqual(cableFromSize('3C+E 185mm² Cu XLPE'), { conductor: 'Cu', crossSectionMm2: 185, rOhmPerKm: 0.0991, xOhmPerKm: 0.08 })
    assert.deepEqual(cableFromSize('4x150 Al'), { conductor: 'Al', crossSectionMm2: 150, rOhmPerKm: 0.206, xOhmPerKm: 0.08 })
    assert.equal(cableFromSize('185mm²'), null, 'no conductor named')
    assert.equal(cableFromSize('Cu 187mm²'), null, 'not a standard size')
    const motorCase = fixture.cases[1]!.network
    const withSize = (cableSize: string) => ({
      nodes: motorCase.nodes.map((n) => (n.id === 'B3' ? { ...n, cableSize, study: {} } : n)),
      edges: motorCase.edges,
    })
    const result = shortCircuitStudy(graphOf(withSize('3C+E 95mm² Cu XLPE')), { lvTolerancePercent: 10, fHz: 50 })
    assert.deepEqual(result.assumed.cablesFromSize, [{ nodeId: 'B3', cableSize: '3C+E 95mm² Cu XLPE', rOhmPerKm: 0.193, xOhmPerKm: 0.08 }])
    // B3 without its motor share is the grid behind 1 km of 0.32 + j0.07 and 2 km of 0.193 + j0.08 Ω/km.
    const b3 = result.buses.find((b) => b.busId === 'B3')!
    const xq = (0.95 * 0.4 ** 2) / 8 / Math.sqrt(1.01)
    const expectedMin = (0.95 * 0.4) / (Math.sqrt(3) * Math.hypot(0.1 * xq + 0.32 + 2 * 0.193, xq + 0.07 + 2 * 0.08))
    assert.ok(Math.abs(b3.ikssMinKa - expectedMin) < 1e-9, `${b3.ikssMinKa} vs ${expectedMin}`)
    const zeroLength = { nodes: motorCase.nodes.map((n) => (n.id === 'B3' ? { ...n, cableLengthM: 0 } : n)), edges: motorCase.edges }
    assert.throws(
      () => shortCircuitStudy(graphOf(zeroLength), { lvTolerancePercent: 10, fHz: 50 }),
      (err: unknown) => err instanceof StudyDataMissing && /B3/.test(err.message) && /cableLengthM/.test(err.message),
    )
    assert.throws(
      () => shortCircuitStudy(graphOf(withSize('95mm²')), { lvTolerancePercent: 10, fHz: 50 }),
      (err: unknown) =>
        err instanceof StudyDataMissing &&
        JSON.stringify((err.extensions?.missing as Array<{ nodeId: string; parameter: string }>).map((m) => [m.nodeId, m.parameter])) ===
          JSON.stringify([
            ['B3', 'rOhmPerKm'],
            ['B3', 'xOhmPerKm'],
          ]),
    )
  })

  it('a network of more energised buses than the solver takes is refused before any computation', () => {
    assert.throws(
      () => shortCircuitStudy(graphOf(feeder(MAX_STUDY_BUSES + 1)), { lvTolerancePercent: 10, fHz: 50 }),
      (err: unknown) => err instanceof StudyTooLarge && err.extensions?.busCount === MAX_STUDY_BUSES + 1,
    )
    assert.equal(shortCircuitStudy(graphOf(feeder(20)), { lvTolerancePercent: 10, fHz: 50 }).buses.length, 20)
  })

  it(`sources × buses bounded: past ${MAX_SOURCE_SHARES} shares refused before any source is solved; contributions=all past ${MAX_LISTED_CONTRIBUTIONS} refused, the largest or one bus's answered`, () => {
    const options = { lvTolerancePercent: 10, fHz: 50 } as const
    /** The feeder with a 75 kW motor on each bus after the grid: as many sources as buses. */
    const motorised = (count: number) => {
      const { nodes, edges } = feeder(count)
      const motor = {
        nodeType: 8,
        ratedVoltageV: 400,
        study: { ratedPowerKw: 75, ratedVoltageKv: 0.4, powerFactor: 0.85, efficiencyPercent: 94, lockedRotorRatio: 6, rxRatio: 0.3 },
      }
      return {
        nodes: [...nodes, ...Array.from({ length: count - 1 }, (_, i) => ({ ...motor, id: `M${i + 1}` }))],
        edges: [...edges, ...Array.from({ length: count - 1 }, (_, i) => ({ sourceId: bus(i + 1), targetId: `M${i + 1}`, edgeType: 2 }))],
      } as { nodes: ElectricalNode[]; edges: ElectricalEdge[] }
    }
    // 2 100 buses and as many sources (the grid and 2 099 motors): 4.41 million shares.
    assert.throws(
      () => shortCircuitStudy(graphOf(motorised(2100)), options, { contributions: 'none' }),
      (err: unknown) => err instanceof StudyTooManySources && err.extensions?.busCount === 2100 && err.extensions?.sourceCount === 2100,
    )
    // 1 100 buses and sources: computed; every contribution at every bus would be 1.21 million.
    const graph = graphOf(motorised(1100))
    assert.throws(
      () => shortCircuitStudy(graph, options, { contributions: 'all' }),
      (err: unknown) => err instanceof TooManyContributions && err.extensions?.sourceCount === 1100 && err.errors?.[0]?.pointer === '/contributions',
    )
    const largest = shortCircuitStudy(graph, options, { contributions: 'largest' })
    assert.equal(largest.buses.length, 1100)
    assert.ok(largest.buses.every((b) => b.contributions?.length === 5))
    const one = shortCircuitStudy(graph, options, { contributions: 'all', busId: bus(3) })
    assert.deepEqual([one.buses.length, one.buses[0]?.contributions?.length], [1, 1100])
  })

  it('a feeder of 3 000 buses (six times what the dense solver took): bus k sees the grid plus k cable sections, as computed by hand', () => {
    const count = 3000
    const result = shortCircuitStudy(graphOf(feeder(count)), { lvTolerancePercent: 10, fHz: 50 })
    assert.equal(result.buses.length, count)
    // IEC 60909-0: ZQ = c·Un²/S″kQ with R/X 0.1 (c = 1.1 max, 0.95 min at LV, 10 %), a section 3 mΩ + j0.8 mΩ.
    const expected = (k: number, c: number, sMva: number) => {
      const zq = (c * 0.4 ** 2) / sMva
      const xq = zq / Math.sqrt(1 + 0.01)
      const [r, x] = [0.1 * xq + k * 0.003, xq + k * 0.0008]
      return (c * 0.4) / (Math.sqrt(3) * Math.hypot(r, x))
    }
    for (const k of [0, 1, 499, 1500, count - 1]) {
      const b = result.buses.find((x) => x.busId === bus(k))!
      within1Percent(b.ikssMaxKa, expected(k, 1.1, 10), `${bus(k)} I″k max`)
      within1Percent(b.ikssMinKa, expected(k, 0.95, 8), `${bus(k)} I″k min`)
      assert.deepEqual(
        b.contributions.map((s) => s.sourceId),
        [bus(0)],
      )
      within1Percent(b.contributions[0]!.ikssKa, b.ikssMaxKa, `${bus(k)}: the grid is the one source`)
    }
  })
})

interface EarthExpected {
  busId: string
  ikssEarthMaxKa: number
  ikssEarthMinKa?: number
}
const earthFixture = JSON.parse(readFileSync(new URL('../../../../test/fixtures/electrical/earth-fault-pandapower.json', import.meta.url), 'utf8')) as {
  cases: Array<{ name: string; network: { nodes: ElectricalNode[]; edges: ElectricalEdge[] }; expected: EarthExpected[] }>
}
const withStudy = (
  network: { nodes: ElectricalNode[]; edges: ElectricalEdge[] },
  id: string,
  change: (study: Record<string, unknown>) => Record<string, unknown>,
) => ({
  nodes: network.nodes.map((n) => (n.id === id ? { ...n, study: change({ ...n.study }) as ElectricalNode['study'] } : n)),
  edges: network.edges,
})

interface IecExpected {
  busId: string
  ikssMaxKa: number
  ikssTwoPhaseMaxKa: number
  ipKa?: number
  ikssMinKaLinesAt80C: number
}
const iec = JSON.parse(readFileSync(new URL('../../../../test/fixtures/electrical/iec-60909-4.json', import.meta.url), 'utf8')) as {
  network: { nodes: ElectricalNode[]; edges: ElectricalEdge[] }
  expected: IecExpected[]
}

const missingOf = (err: StudyDataMissing) => err.extensions?.missing as MissingStudyData[]

describe('IEC TR 60909-4 example network (three-winding transformers, power station units, motors, meshed 110 kV)', () => {
  /** The bus a node of the fixture is on (a bus is named after its first node: the generator's bus after the generator). */
  const busOf = (result: ReturnType<typeof shortCircuitStudy>, nodeId: string) => {
    const bus = result.buses.find((b) => b.nodeIds.includes(nodeId))
    assert.ok(bus, `a bus holding ${nodeId}`)
    return bus
  }

  it('I″k max, I″k2 and ip (method C) at every bus within 1 % of the published values', () => {
    const result = shortCircuitStudy(graphOf(iec.network), { lvTolerancePercent: 10, fHz: 50 }, { contributions: 'none' })
    for (const e of iec.expected) {
      const bus = busOf(result, e.busId)
      within1Percent(bus.ikssMaxKa, e.ikssMaxKa, `${e.busId} I″k max`)
      within1Percent(bus.ikssTwoPhaseMaxKa, e.ikssTwoPhaseMaxKa, `${e.busId} I″k2 max`)
      if (e.ipKa !== undefined) within1Percent(bus.ipKa, e.ipKa, `${e.busId} ip`)
      assert.equal(bus.kappaMethod, 'C')
    }
  })

  it('the minimum case at every bus within 1 % with conductors at the 80 °C of the reference (conductorEndTemperatureC); at the default 20 °C the 1 km cable to B7 moves it further', () => {
    // IEC 60909-0 raises line resistances to their end temperature for minimum currents: RL = (1 + 0.004/K·(θe − 20 °C))·RL20.
    const hot = shortCircuitStudy(graphOf(iec.network), { lvTolerancePercent: 10, fHz: 50, conductorEndTemperatureC: 80 }, { contributions: 'none' })
    assert.equal(hot.assumed.minCaseConductorTemperatureC, 80)
    for (const e of iec.expected) within1Percent(busOf(hot, e.busId).ikssMinKa, e.ikssMinKaLinesAt80C, `${e.busId} I″k min, lines at 80 °C`)
    // The maximum case keeps its conductors at 20 °C.
    const cool = shortCircuitStudy(graphOf(iec.network), { lvTolerancePercent: 10, fHz: 50 }, { contributions: 'none' })
    for (const e of iec.expected) assert.equal(busOf(hot, e.busId).ikssMaxKa, busOf(cool, e.busId).ikssMaxKa, `${e.busId} I″k max unchanged`)
    // The default 20 °C (stated in `assumed`): B7, behind 1 km of cable with R ≈ X, comes out 2.1 % higher.
    assert.equal(cool.assumed.minCaseConductorTemperatureC, 20)
    const b7 = busOf(cool, 'B7').ikssMinKa / iec.expected.find((e) => e.busId === 'B7')!.ikssMinKaLinesAt80C
    assert.ok(b7 > 1.02 && b7 < 1.025, `B7 at 20 °C over the 80 °C reference: ${b7}`)
  })

  it('states KS, KSO and the three KT of each three-winding transformer; the unit generators are not corrected by KG', () => {
    const result = shortCircuitStudy(graphOf(iec.network), { lvTolerancePercent: 10, fHz: 50 }, { contributions: 'none' })
    const factors = new Map(result.assumed.correctionFactors.map((f) => [`${f.nodeId} ${f.factor}`, f.value]))
    const close = (key: string, value: number) => {
      const got = factors.get(key)
      assert.ok(got !== undefined && Math.abs(got - value) < 1e-9, `${key}: ${got} vs ${value}`)
    }
    // KTAB = 0.95·cmax/(1 + 0.6·xTAB), xTAB = √(21² − 0.26²) %: T3 and T4 of the example.
    const kt = (uk: number, ur: number) => (0.95 * 1.1) / (1 + 0.6 * Math.sqrt(uk * uk - ur * ur))
    for (const t of ['T3', 'T4']) {
      close(`${t} KTAB`, kt(0.21, 0.0026))
      close(`${t} KTAC`, kt(0.1, 0.0016))
      close(`${t} KTBC`, kt(0.07, 0.0016))
    }
    // G1/T1, on-load tap changer: KS = UnQ²/UrG² · UrTLV²/UrTHV² · cmax/(1 + |x″d − xT|·sin φrG).
    const xT1 = Math.sqrt(0.16 ** 2 - 0.005 ** 2)
    const ks = ((110 ** 2 / 21 ** 2) * (21 ** 2 / 115 ** 2) * 1.1) / (1 + Math.abs(0.14 - xT1) * Math.sqrt(1 - 0.85 ** 2))
    close('G1 KS', ks)
    close('T1 KS', ks)
    // G2/T2, no on-load tap changer, pG 7.5 %: KSO = UnQ/(UrG·(1 + pG)) · UrTLV/UrTHV · cmax/(1 + x″d·sin φrG).
    const kso = ((110 / (10.5 * 1.075)) * (10.5 / 120) * 1.1) / (1 + 0.16 * Math.sqrt(1 - 0.9 ** 2))
    close('G2 KSO', kso)
    close('T2 KSO', kso)
    assert.equal(factors.has('G1 KG') || factors.has('T1 KT') || factors.has('G2 KG') || factors.has('T2 KT'), false)
    close('G3 KG', ((10 / 10.5) * 1.1) / (1 + 0.1 * 0.6))
    assert.deepEqual(
      result.assumed.notModelled.map((m) => m.nodeId),
      ['G1', 'G2'],
      'what the fault between a unit’s generator and transformer does not redo is stated per unit',
    )
    // A generator outside a unit operated up to pG above its rated voltage: KG = Un/(UrG·(1 + pG))·cmax/(1 + x″d·sin φrG).
    const raised = {
      nodes: iec.network.nodes.map((n) => (n.id === 'G3' ? { ...n, study: { ...n.study, voltageRangePercent: 5 } } : n)),
      edges: iec.network.edges,
    }
    const g3 = shortCircuitStudy(graphOf(raised), { lvTolerancePercent: 10, fHz: 50 }, { contributions: 'none' }).assumed.correctionFactors.find(
      (f) => f.nodeId === 'G3',
    )!
    assert.ok(Math.abs(g3.value - ((10 / (10.5 * 1.05)) * 1.1) / (1 + 0.1 * 0.6)) < 1e-12, `G3 KG with pG 5 %: ${g3.value}`)
    // Three-winding transformers with an earthed star point leave their zero-sequence parts without I″k1, saying so.
    assert.deepEqual(
      result.earthFaults.missing.map((m) => [m.nodeId, m.parameter]),
      [
        ['T3', 'vectorGroup'],
        ['T4', 'vectorGroup'],
        ['T6', 'vectorGroup'],
      ],
    )
  })

  it('a three-winding transformer names its windings’ neighbours: one that names none is a 422 naming the node and parameter', () => {
    const wrong = {
      nodes: iec.network.nodes.map((n) => (n.id === 'T5' ? { ...n, study: { ...n.study, lvNodeId: 'B7' } } : n)),
      edges: iec.network.edges,
    }
    assert.throws(
      () => shortCircuitStudy(graphOf(wrong), { lvTolerancePercent: 10, fHz: 50 }),
      (err: unknown) =>
        err instanceof StudyDataMissing &&
        missingOf(err).some(
          (m) => m.nodeId === 'T5' && m.parameter === 'lvNodeId' && /names B7, not the neighbour the LV winding connects to, one of/.test(m.reason),
        ),
    )
    const noUnit = {
      nodes: iec.network.nodes.map((n) => (n.id === 'G1' ? { ...n, study: { ...n.study, unitTransformerId: 'T2' } } : n)),
      edges: iec.network.edges,
    }
    assert.throws(
      () => shortCircuitStudy(graphOf(noUnit), { lvTolerancePercent: 10, fHz: 50 }),
      (err: unknown) => err instanceof StudyDataMissing && missingOf(err).some((m) => m.nodeId === 'G1' && m.parameter === 'unitTransformerId'),
    )
  })
})

describe('line-to-earth faults (IEC 60909-0 I″k1) against pandapower reference values', () => {
  for (const c of earthFixture.cases) {
    it(c.name, () => {
      const result = shortCircuitStudy(graphOf(c.network), { lvTolerancePercent: 10, fHz: 50 })
      assert.deepEqual(result.faultTypes, ['threePhase', 'twoPhase', 'singlePhaseToEarth'])
      for (const e of c.expected) {
        const bus = result.buses.find((b) => b.busId === e.busId)!
        within1Percent(bus.ikssEarthMaxKa!, e.ikssEarthMaxKa, `${e.busId} I″k1 max`)
        if (e.ikssEarthMinKa !== undefined) within1Percent(bus.ikssEarthMinKa!, e.ikssEarthMinKa, `${e.busId} I″k1 min`)
      }
    })
  }

  it('by hand at the 110 kV bus: I″k1 = √3·c·Un / |2·ZQ + Z(0)Q| with Z(0)Q from x0x1Ratio and r0x0Ratio; a delta winding blocks the 20 kV side', () => {
    const network = earthFixture.cases[0]!.network
    const changed = withStudy(network, 'B1', (s) => ({ ...s, x0x1Ratio: 2, r0x0Ratio: 0.5 }))
    const result = shortCircuitStudy(graphOf(changed), { lvTolerancePercent: 10, fHz: 50 })
    const xq = (1.1 * 110 ** 2) / 100 / Math.sqrt(1 + 0.35 ** 2)
    const expected = (Math.sqrt(3) * 1.1 * 110) / Math.hypot(2 * 0.35 * xq + 0.5 * 2 * xq, 2 * xq + 2 * xq)
    const b1 = result.buses.find((b) => b.busId === 'B1')!
    assert.ok(Math.abs(b1.ikssEarthMaxKa! - expected) < 1e-9, `${b1.ikssEarthMaxKa} vs ${expected}`)
    // YNd: the 20 kV buses have no path to earth.
    const ynd = shortCircuitStudy(graphOf(earthFixture.cases[1]!.network), { lvTolerancePercent: 10, fHz: 50 })
    assert.deepEqual(ynd.earthFaults.unearthedBusIds, ['B2', 'B3', 'B4'])
    assert.deepEqual(
      ynd.buses.map((b) => [b.busId, b.ikssEarthMaxKa === null]),
      [
        ['B1', false],
        ['B2', true],
        ['B3', true],
        ['B4', true],
      ],
    )
  })

  it('missing zero-sequence data leaves the buses of its zero-sequence part without I″k1 and names node and parameter; the rest is computed (no 422)', () => {
    const network = earthFixture.cases[0]!.network
    const noR0 = withStudy(network, 'B4', ({ r0OhmPerKm: _, ...s }) => s)
    const result = shortCircuitStudy(graphOf(noR0), { lvTolerancePercent: 10, fHz: 50 })
    assert.deepEqual(result.faultTypes, ['threePhase', 'twoPhase', 'singlePhaseToEarth'])
    assert.deepEqual(result.earthFaults.incompleteBusIds, ['B2', 'B3', 'B4'])
    assert.deepEqual(
      result.earthFaults.missing.map((m) => [m.nodeId, m.parameter]),
      [['B4', 'r0OhmPerKm']],
    )
    assert.deepEqual(
      result.buses.map((b) => [b.busId, b.ikssEarthMaxKa === null, b.ikssEarthMinKa === null]),
      [
        ['B1', false, false],
        ['B2', true, true],
        ['B3', true, true],
        ['B4', true, true],
      ],
    )
    // Without a vector group nothing is known of either side; without the grid's ratios, of the 110 kV bus.
    const bare = withStudy(
      withStudy(network, 'B1', ({ x0x1Ratio: _, ...s }) => s),
      'T1',
      ({ vectorGroup: _, ...s }) => s,
    )
    const none = shortCircuitStudy(graphOf(bare), { lvTolerancePercent: 10, fHz: 50 })
    assert.deepEqual(none.faultTypes, ['threePhase', 'twoPhase'])
    assert.deepEqual(
      none.earthFaults.missing.map((m) => [m.nodeId, m.parameter]),
      [
        ['B1', 'x0x1Ratio'],
        ['T1', 'vectorGroup'],
      ],
    )
    assert.deepEqual(none.earthFaults.incompleteBusIds, ['B1', 'B2', 'B3', 'B4'])
    // A network with no zero-sequence data at all: the answer lists the first 100 and counts them all.
    const bare300 = shortCircuitStudy(graphOf(feeder(300)), { lvTolerancePercent: 10, fHz: 50 })
    assert.equal(bare300.earthFaults.missing.length, 100)
    assert.equal(bare300.earthFaults.missingCount, 2 + 2 * 299)
    assert.equal(bare300.earthFaults.incompleteBusIds.length, 300)
  })

  it('an earthing impedance adds 3·ZN; a YNyn transformer passes zero sequence through; an earthed generator earths its bus', () => {
    const network = earthFixture.cases[0]!.network
    // Without line capacitances, at B2 by hand: Z(1) = ZQ (1.1·20²/100 Ω at R/X 0.35) + KT·ZT/2, Z(0) = (KT·Z(0)T + 3·20 Ω)/2.
    const noC0 = (s: Record<string, unknown>) => ({ ...s, c0NfPerKm: undefined })
    const resistor = (s: Record<string, unknown>) => ({ ...s, neutralEarthingROhm: 20 })
    const earthed = withStudy(withStudy(withStudy(withStudy(network, 'T1', resistor), 'T2', resistor), 'B3', noC0), 'B4', noC0)
    const b2 = shortCircuitStudy(graphOf(earthed), { lvTolerancePercent: 10, fHz: 50 }).buses.find((b) => b.busId === 'B2')!
    const xq = 4.4 / Math.sqrt(1 + 0.35 ** 2)
    const xt = Math.sqrt(0.112 ** 2 - 0.00282 ** 2)
    const kt = (0.95 * 1.1) / (1 + 0.6 * xt)
    const [r1, x1] = [0.35 * xq + (kt * 0.00282 * 16) / 2, xq + (kt * xt * 16) / 2]
    const [r0, x0] = [(kt * 0.004 * 16 + 60) / 2, (kt * Math.sqrt(0.05 ** 2 - 0.004 ** 2) * 16) / 2]
    const byHand = (Math.sqrt(3) * 1.1 * 20) / Math.hypot(2 * r1 + r0, 2 * x1 + x0)
    assert.ok(Math.abs(b2.ikssEarthMaxKa! - byHand) < 1e-9, `${b2.ikssEarthMaxKa} vs ${byHand}`)
    const ynyn = withStudy(
      withStudy(
        withStudy(
          withStudy(network, 'T1', (s) => ({ ...s, vectorGroup: 'YNyn0' })),
          'T2',
          (s) => ({ ...s, vectorGroup: 'YNyn0' }),
        ),
        'B3',
        noC0,
      ),
      'B4',
      noC0,
    )
    const through = shortCircuitStudy(graphOf(ynyn), { lvTolerancePercent: 10, fHz: 50 })
    assert.deepEqual(through.earthFaults, { incompleteBusIds: [], missing: [], missingCount: 0, unearthedBusIds: [] })
    // At the 110 kV bus the 20 kV side adds no path to earth (the only earth is the grid's), so I″k1 is the Dyn case's.
    within1Percent(through.buses[0]!.ikssEarthMaxKa!, 0.52209347337, 'B1 behind YNyn')
    // Behind YNd transformers the 20 kV side is unearthed until a generator there has its star point earthed.
    const ynd = earthFixture.cases[1]!.network
    const gen = {
      nodes: [
        ...ynd.nodes,
        {
          id: 'G',
          nodeType: 1,
          study: { ratedPowerKva: 10000, ratedVoltageKv: 20, xdSubtransientPercent: 15, rxRatio: 0.05, powerFactor: 0.8, neutralEarthing: 'isolated' },
        },
      ] as ElectricalNode[],
      edges: [...ynd.edges, { sourceId: 'G', targetId: 'B2', edgeType: 2 }],
    }
    const isolated = shortCircuitStudy(graphOf(gen), { lvTolerancePercent: 10, fHz: 50 })
    assert.deepEqual(isolated.earthFaults.unearthedBusIds, ['B2', 'B3', 'B4'])
    const earthedGen = shortCircuitStudy(graphOf(withStudy(gen, 'G', (s) => ({ ...s, neutralEarthing: 'earthed', x0Percent: 5 }))), {
      lvTolerancePercent: 10,
      fHz: 50,
    })
    assert.deepEqual(earthedGen.earthFaults.unearthedBusIds, [])
    assert.ok(earthedGen.buses.every((b) => (b.ikssEarthMaxKa ?? 0) > 0))
    const unknown = shortCircuitStudy(graphOf(withStudy(gen, 'G', ({ neutralEarthing: _, ...s }) => s)), { lvTolerancePercent: 10, fHz: 50 })
    assert.deepEqual(
      unknown.earthFaults.missing.map((m) => [m.nodeId, m.parameter]),
      [['G', 'neutralEarthing']],
    )
  })
})

describe('short-circuit answers of a chosen size', () => {
  // A 400 V board fed by the grid with seven motors on it, and a second board 20 m away.
  const MOTOR = { ratedPowerKw: 100, ratedVoltageKv: 0.4, powerFactor: 0.85, efficiencyPercent: 95, lockedRotorRatio: 6, rxRatio: 0.3 }
  const network = {
    nodes: [
      { id: 'G', nodeType: 0, ratedVoltageV: 400, study: { scPowerMaxMva: 10, scPowerMinMva: 8, rxRatio: 0.1 } },
      { id: 'MSB', nodeType: 3, ratedVoltageV: 400 },
      { id: 'SUB', nodeType: 3, ratedVoltageV: 400, cableLengthM: 20, study: { rOhmPerKm: 0.2, xOhmPerKm: 0.08 } },
      ...Array.from({ length: 7 }, (_, i) => ({ id: `M${i + 1}`, nodeType: 8, study: { ...MOTOR, ratedPowerKw: 100 + 10 * i } })),
    ] as ElectricalNode[],
    edges: [
      { sourceId: 'G', targetId: 'MSB', edgeType: 2 },
      { sourceId: 'MSB', targetId: 'SUB', edgeType: 0 },
      ...Array.from({ length: 7 }, (_, i) => ({ sourceId: 'MSB', targetId: `M${i + 1}`, edgeType: 2 })),
    ],
  }
  const options = { lvTolerancePercent: 10, fHz: 50 } as const

  it('`largest` keeps the 5 largest of each bus, `none` none, `all` every one; contributionCount says how many; the figures are the same', () => {
    const all = shortCircuitStudy(graphOf(network), options, { contributions: 'all' })
    const largest = shortCircuitStudy(graphOf(network), options, { contributions: 'largest' })
    const none = shortCircuitStudy(graphOf(network), options, { contributions: 'none' })
    assert.deepEqual(
      all.buses.map((b) => [b.busId, b.contributionCount, b.contributions.length]),
      [
        ['G', 8, 8],
        ['SUB', 8, 8],
      ],
    )
    assert.deepEqual(
      largest.buses.map((b) => [b.contributionCount, b.contributions]),
      all.buses.map((b) => [8, b.contributions.slice(0, 5)]),
    )
    assert.deepEqual(
      largest.buses[0]!.contributions.map((c) => c.sourceId),
      ['G', 'M7', 'M6', 'M5', 'M4'],
    )
    assert.deepEqual(
      none.buses.map((b) => [b.contributionCount, b.contributions]),
      [
        [8, []],
        [8, []],
      ],
    )
    assert.deepEqual({ ...none, buses: none.buses.map(({ contributions: _, ...b }) => b) }, { ...all, buses: all.buses.map(({ contributions: _, ...b }) => b) })
  })

  it('`busId` keeps one bus, named by its busId or by any node on it', () => {
    const byBus = shortCircuitStudy(graphOf(network), options, { contributions: 'all', busId: 'SUB' })
    assert.deepEqual(
      byBus.buses.map((b) => [b.busId, b.contributions.length]),
      [['SUB', 8]],
    )
    const byNode = shortCircuitStudy(graphOf(network), options, { contributions: 'largest', busId: 'M3' })
    assert.deepEqual(
      byNode.buses.map((b) => [b.busId, b.contributions.length]),
      [['G', 5]],
    )
    assert.deepEqual(shortCircuitStudy(graphOf(network), options, { contributions: 'none', busId: 'nowhere' }).buses, [])
  })
})
