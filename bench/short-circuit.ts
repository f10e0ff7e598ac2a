// Issue 31: the IEC 60909 short-circuit study on a generated 5 000-bus network (BENCH_SC_BUSES), time and memory,
// against the same study on a network a tenth the size in the same run: the sparse solver's time grows about with the
// bus count (a ratio near 10×), where the dense LU it replaced grew with its cube. The network holds zero-sequence data,
// so the line-to-earth currents are solved too; the whole answer (every contribution) is timed against the default
// one (each bus's 5 largest). Needs no database.
import { compareEdges, compareIds } from '../src/modules/electrical/rows.ts'
import { shortCircuitStudy, type ContributionsView } from '../src/modules/electrical/studies/short-circuit.ts'
import { buildGraph, type ElectricalEdge, type ElectricalNode } from '../src/modules/electrical/topology.ts'
import { BENCH_RUNS, loadNow, loadSpread, median, medianWithSpread, ratio } from './lib.ts'

/**
 * A 400 V distribution of `size` buses: a grid infeed feeding a tree of fan-out 3 through 10 m cables, a ring
 * closed every 50 buses (meshed: κ by method C), and a 75 kW motor on every 25th bus (sources contributing everywhere);
 * with zero-sequence data (the grid's ratios, each cable's R(0)/X(0)), so every bus has its I″k1.
 */
export function generatedFeeder(size: number) {
  const bus = (i: number) => `B${String(i).padStart(6, '0')}`
  const nodes: ElectricalNode[] = [
    {
      id: bus(0),
      name: 'grid',
      nodeType: 0,
      ratedVoltageV: 400,
      study: { scPowerMaxMva: 20, scPowerMinMva: 15, rxRatio: 0.1, x0x1Ratio: 1, r0x0Ratio: 0.2 },
    } as ElectricalNode,
  ]
  const edges: ElectricalEdge[] = []
  for (let i = 1; i < size; i++) {
    nodes.push({
      id: bus(i),
      name: `bus ${i}`,
      nodeType: 3,
      ratedVoltageV: 400,
      cableLengthM: 10,
      study: { rOhmPerKm: 0.3, xOhmPerKm: 0.08, r0OhmPerKm: 1.2, x0OhmPerKm: 0.3 },
    } as ElectricalNode)
    edges.push({ sourceId: bus(Math.floor((i - 1) / 3)), targetId: bus(i), edgeType: 0 } as ElectricalEdge)
    if (i > 10 && i % 50 === 0) edges.push({ sourceId: bus(i - 7), targetId: bus(i), edgeType: 0 } as ElectricalEdge)
    if (i % 25 === 0) {
      const motor = `M${String(i).padStart(6, '0')}`
      nodes.push({
        id: motor,
        name: `motor ${i}`,
        nodeType: 8,
        ratedVoltageV: 400,
        study: { ratedPowerKw: 75, ratedVoltageKv: 0.4, powerFactor: 0.85, efficiencyPercent: 94, lockedRotorRatio: 6, rxRatio: 0.3 },
      } as ElectricalNode)
      edges.push({ sourceId: bus(i), targetId: motor, edgeType: 2 } as ElectricalEdge)
    }
  }
  nodes.sort((a, b) => compareIds(a.id, b.id))
  edges.sort((a, b) =>
    compareEdges(
      { source_id: a.sourceId, target_id: a.targetId, edge_type: a.edgeType },
      { source_id: b.sourceId, target_id: b.targetId, edge_type: b.edgeType },
    ),
  )
  return buildGraph(nodes, edges)
}

function measure(size: number, runs: number, view: ContributionsView): { ms: number[]; heapMb: number; buses: number; contributions: number } {
  const graph = generatedFeeder(size)
  const times: number[] = []
  let heapMb = 0
  let buses = 0
  let contributions = 0
  for (let r = 0; r < runs; r++) {
    const before = process.memoryUsage()
    const started = process.hrtime.bigint()
    const result = shortCircuitStudy(graph, { lvTolerancePercent: 10, fHz: 50 }, view)
    if (result.buses.some((b) => b.ikssEarthMaxKa === null)) throw new Error('the generated network lacks zero-sequence data')
    times.push(Number(process.hrtime.bigint() - started) / 1e6)
    const after = process.memoryUsage()
    // Heap and typed-array growth over one study, the answer included (a collection may run inside it: a lower bound).
    heapMb = Math.max(heapMb, (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / 2 ** 20)
    buses = result.buses.length
    contributions = result.buses.reduce((n, b) => n + b.contributions.length, 0)
  }
  return { ms: times, heapMb, buses, contributions }
}

export function benchShortCircuit(size: number, runs = Math.max(BENCH_RUNS, 5)): void {
  const load = loadNow()
  const all = { contributions: 'all' } as const
  const [a, b] = [measure(Math.round(size / 10), runs, all), measure(size, runs, all)]
  const d = measure(size, runs, { contributions: 'largest' })
  const ms = (n: number) => `${n.toFixed(1)} ms`
  console.log(
    `short-circuit IEC 60909 (3-phase, 2-phase, 1-phase to earth) ${b.buses} buses (${b.contributions} source contributions)   ` +
      `${medianWithSpread(b.ms, ms)}, +${b.heapMb.toFixed(1)} MB   default answer (${d.contributions} contributions) ${medianWithSpread(d.ms, ms)}, ` +
      `+${d.heapMb.toFixed(1)} MB   ${a.buses} buses ${medianWithSpread(a.ms, ms)}   ${b.buses}/${a.buses} buses: ${ratio(median(b.ms), median(a.ms))} time   ` +
      loadSpread([load, loadNow()]),
  )
}
