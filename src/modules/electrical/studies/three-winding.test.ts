import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compareEdges, compareIds } from '../rows.ts'
import { buildGraph, type ElectricalEdge, type ElectricalNode } from '../topology.ts'
import { loadFlowStudy } from './load-flow-study.ts'
import { shortCircuitStudy } from './short-circuit.ts'

function graphOf(nodes: ElectricalNode[], edges: ElectricalEdge[]) {
  return buildGraph(
    [...nodes].sort((a, b) => compareIds(a.id, b.id)),
    [...edges].sort((a, b) =>
      compareEdges(
        { source_id: a.sourceId, target_id: a.targetId, edge_type: a.edgeType },
        { source_id: b.sourceId, target_id: b.targetId, edge_type: b.edgeType },
      ),
    ),
  )
}

/** A 110 kV grid feeding a 20 kV load (20 MW at cos φ 0.9) through transformer T: three-winding (a 10 kV winding left idle) or two-winding. */
function network(threeWinding: boolean) {
  const nodes: ElectricalNode[] = [
    {
      id: 'Q',
      name: 'Q',
      nodeType: 0,
      ratedVoltageV: 110_000,
      study: { scPowerMaxMva: 3000, scPowerMinMva: 2000, rxRatio: 0.1, voltageSetpointPu: 1.02 },
    } as ElectricalNode,
    { id: 'B20', name: 'B20', nodeType: 3, ratedVoltageV: 20_000 } as ElectricalNode,
    { id: 'L', name: 'L', nodeType: 10, ratedVoltageV: 20_000, study: { activePowerKw: 20_000, powerFactor: 0.9 } } as ElectricalNode,
  ]
  const edges: ElectricalEdge[] = [
    { sourceId: 'Q', targetId: 'T', edgeType: 3 },
    { sourceId: 'T', targetId: 'B20', edgeType: 3 },
    { sourceId: 'B20', targetId: 'L', edgeType: 2 },
  ] as ElectricalEdge[]
  if (threeWinding) {
    nodes.push({ id: 'B10', name: 'B10', nodeType: 3, ratedVoltageV: 10_000 } as ElectricalNode)
    nodes.push({
      id: 'T',
      name: 'T',
      nodeType: 2,
      study: {
        hvRatedPowerKva: 40_000,
        mvRatedPowerKva: 40_000,
        lvRatedPowerKva: 20_000,
        hvRatedVoltageKv: 115,
        mvRatedVoltageKv: 21,
        lvRatedVoltageKv: 10.5,
        ukHvMvPercent: 12,
        urHvMvPercent: 0.4,
        ukHvLvPercent: 10,
        urHvLvPercent: 0.3,
        ukMvLvPercent: 8,
        urMvLvPercent: 0.3,
        vectorGroup: 'Yyd5',
        hvNodeId: 'Q',
        mvNodeId: 'B20',
        lvNodeId: 'B10',
      },
    } as ElectricalNode)
    edges.push({ sourceId: 'T', targetId: 'B10', edgeType: 3 } as ElectricalEdge)
  } else {
    nodes.push({
      id: 'T',
      name: 'T',
      nodeType: 2,
      study: { ratedPowerKva: 40_000, hvRatedVoltageKv: 115, lvRatedVoltageKv: 21, ukPercent: 12, urPercent: 0.4, vectorGroup: 'Yd5' },
    } as ElectricalNode)
  }
  return graphOf(nodes, edges)
}

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.abs(b), `${what}: ${a} vs ${b}`)

describe('three-winding transformer: with one winding idle it is the two-winding transformer of the other pair', () => {
  it('short circuit: ZA + ZB of the star is KTAB·ZAB, so I″k (max, min) and κ at both buses equal the two-winding ones', () => {
    const three = shortCircuitStudy(network(true), { lvTolerancePercent: 10, fHz: 50 }, { contributions: 'none' })
    const two = shortCircuitStudy(network(false), { lvTolerancePercent: 10, fHz: 50 }, { contributions: 'none' })
    for (const id of ['Q', 'B20']) {
      const [a, b] = [three.buses.find((x) => x.busId === id)!, two.buses.find((x) => x.busId === id)!]
      close(a.ikssMaxKa, b.ikssMaxKa, `${id} I″k max`)
      close(a.ikssMinKa, b.ikssMinKa, `${id} I″k min`)
      close(a.kappa, b.kappa, `${id} κ`)
    }
    assert.deepEqual(
      three.buses.map((b) => b.busId),
      ['B10', 'B20', 'Q'],
      'the star point is not a bus of the answer',
    )
  })

  it('load flow: the same voltages, the winding flows on `T/hv` and `T/mv`, none on `T/lv`; loading against each winding’s rated power', () => {
    const three = loadFlowStudy(network(true))
    const two = loadFlowStudy(network(false))
    assert.ok(three.converged && two.converged)
    const v = (study: typeof three, id: string) => study.buses.find((b) => b.busId === id)!
    close(v(three, 'B20').voltagePu, v(two, 'B20').voltagePu, 'B20 |V|')
    close(v(three, 'B20').angleDeg, v(two, 'B20').angleDeg, 'B20 angle')
    const branch = (id: string) => three.branches.find((b) => b.branchId === id)!
    const twoT = two.branches.find((b) => b.branchId === 'T')!
    // Each arm runs from the star point: what the HV arm takes at the HV bus, the two-winding transformer takes there.
    close(branch('T/hv').pToKw, twoT.pFromKw, 'power the HV winding takes')
    const starBalance = branch('T/hv').pFromKw + branch('T/mv').pFromKw + branch('T/lv').pFromKw
    assert.ok(Math.abs(starBalance) < 1e-6, `no power stays in the star point: ${starBalance}`)
    close(branch('T/mv').currentToA, twoT.currentToA, 'MV winding current')
    assert.ok(Math.abs(branch('T/lv').pToKw) < 1e-9, `idle LV winding: ${branch('T/lv').pToKw}`)
    close(branch('T/mv').loadingPercent!, twoT.loadingPercent!, 'MV winding loading (same rated power)')
    assert.ok(v(three, 'T/star'), 'the star point is a bus of the load flow')
  })
})
