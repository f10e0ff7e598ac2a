// Issue 31: the Newton–Raphson load flow on a generated 5 000-bus network (BENCH_LF_BUSES), time and memory, against
// the same solve on a network a tenth the size in the same run: a sparse solver's time grows about with the bus count
// (the ratio near 10x), where a dense Jacobian's LU would grow with its cube. Then the endpoint's work (graph → mapped
// case → solve → answer) on a generated site network of as many boards, against the solve alone. Needs no database.
import type { LoadFlowBranch, LoadFlowBus, LoadFlowCase } from '../src/modules/electrical/studies/load-flow-case.ts'
import { loadFlowNetwork } from '../src/modules/electrical/studies/load-flow-network.ts'
import { loadFlowStudy } from '../src/modules/electrical/studies/load-flow-study.ts'
import { solveLoadFlow } from '../src/modules/electrical/studies/load-flow.ts'
import { buildGraph, type ElectricalEdge, type ElectricalNode } from '../src/modules/electrical/topology.ts'
import { seededRandom } from '../test/support/seeded-random.ts'
import { BENCH_RUNS, loadNow, loadSpread, median, medianWithSpread, ratio } from './lib.ts'

/**
 * A plant-and-distribution-like network of `size` buses, deterministic from `seed`: a grid infeed (slack) feeding a
 * tree of fan-out 4, a ring closed about every 100 buses (meshed), a PV generator on every 50th bus, one branch in 10 a
 * transformer with an off-nominal tap, loads of 0.05–0.11 MW at power factor ≈ 0.93.
 */
export function generatedNetwork(size: number, seed = 1): LoadFlowCase {
  const next = seededRandom(seed)
  const id = (i: number) => `B${i}`
  const buses: LoadFlowBus[] = [{ id: id(0), kind: 'slack', vSetPu: 1.02 }]
  const branches: LoadFlowBranch[] = []
  const line = (from: number, to: number, transformer: boolean): LoadFlowBranch => {
    const rPu = 0.002 + 0.002 * next()
    return {
      id: `L${branches.length}`,
      fromBusId: id(from),
      toBusId: id(to),
      rPu,
      xPu: 3 * rPu,
      bPu: transformer ? 0 : 0.001,
      ...(transformer ? { tapRatio: 0.975 + 0.05 * next() } : {}),
    }
  }
  for (let i = 1; i < size; i++) {
    const pLoadMw = 0.05 + 0.06 * next()
    buses.push(
      i % 50 === 0
        ? { id: id(i), kind: 'pv', vSetPu: 1.0, pGenMw: 2, pLoadMw, qLoadMvar: 0.4 * pLoadMw }
        : { id: id(i), kind: 'pq', pLoadMw, qLoadMvar: 0.4 * pLoadMw },
    )
    branches.push(line(Math.floor((i - 1) / 4), i, i % 10 === 0))
    if (i > 200 && i % 100 === 37) branches.push(line(i - 90, i, false))
  }
  return { baseMva: 100, buses, branches }
}

function measure(study: LoadFlowCase, runs: number): { ms: number[]; iterations: number; heapMb: number } {
  let iterations = 0
  const times: number[] = []
  let heapMb = 0
  for (let r = 0; r < runs; r++) {
    const before = process.memoryUsage()
    const started = process.hrtime.bigint()
    const result = solveLoadFlow(study)
    times.push(Number(process.hrtime.bigint() - started) / 1e6)
    const after = process.memoryUsage()
    // Heap and typed-array growth over one solve (the garbage collector may run inside it: a lower bound).
    heapMb = Math.max(heapMb, (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / 2 ** 20)
    if (!result.converged) throw new Error(`the generated ${study.buses.length}-bus network did not converge: ${result.reason}`)
    iterations = result.iterations
  }
  return { ms: times, iterations, heapMb }
}

const ms = (n: number) => `${n.toFixed(1)} ms`

export function benchLoadFlow(size: number, runs = Math.max(BENCH_RUNS, 5)): void {
  const load = loadNow()
  const [small, large] = [generatedNetwork(Math.round(size / 10)), generatedNetwork(size)]
  const [a, b] = [measure(small, runs), measure(large, runs)]
  console.log(
    `load-flow NR ${large.buses.length} buses/${large.branches.length} branches (seed 1)   ${medianWithSpread(b.ms, ms)}, ${b.iterations} iterations, ` +
      `+${b.heapMb.toFixed(1)} MB   ${small.buses.length} buses ${medianWithSpread(a.ms, ms)}   ${size}/${small.buses.length} buses: ${ratio(median(b.ms), median(a.ms))} time   ${loadSpread([load, loadNow()])}`,
  )
}

/**
 * A site network of `size` switchboards as the endpoint reads it (nodes with study parameters, edges): a 33 kV grid
 * infeed, a tree of fan-out 4 of 1–2 km cables, a 2–5 kW load on every board (about 17 MW in all), a tie cable closing a ring about every
 * 100 boards. Deterministic from `seed`.
 */
export function generatedSiteNetwork(size: number, seed = 1): { nodes: ElectricalNode[]; edges: ElectricalEdge[] } {
  const next = seededRandom(seed)
  const board = (i: number) => (i === 0 ? 'G' : `S${i}`)
  const circuit = () => ({ cableLengthM: 1000 + 1000 * next(), study: { rOhmPerKm: 0.1, xOhmPerKm: 0.08 } })
  const nodes: ElectricalNode[] = [{ id: 'G', nodeType: 0, ratedVoltageV: 33_000 }]
  const edges: ElectricalEdge[] = []
  for (let i = 1; i < size; i++) {
    nodes.push({ id: board(i), nodeType: 3, ratedVoltageV: 33_000, ...circuit() })
    nodes.push({ id: `L${i}`, nodeType: 10, study: { activePowerKw: 2 + 3 * next(), powerFactor: 0.93 } })
    edges.push({ sourceId: board(Math.floor((i - 1) / 4)), targetId: board(i), edgeType: 0 }, { sourceId: board(i), targetId: `L${i}`, edgeType: 2 })
    if (i > 200 && i % 100 === 37) {
      nodes.push({ id: `T${i}`, nodeType: 3, ...circuit() })
      edges.push({ sourceId: board(i - 90), targetId: `T${i}`, edgeType: 0 }, { sourceId: `T${i}`, targetId: board(i), edgeType: 2 })
    }
  }
  nodes.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return { nodes, edges }
}

/**
 * The endpoint's work on a generated site network of `size` boards (no database, no HTTP: the graph the cache holds,
 * mapped to the bus/branch model, solved and turned into the answer) against the solve alone of the mapped case:
 * the ratio is what the mapping and the answer add to the solver.
 */
export function benchLoadFlowEndpoint(size: number, runs = Math.max(BENCH_RUNS, 5)): void {
  const load = loadNow()
  const { nodes, edges } = generatedSiteNetwork(size)
  const graph = buildGraph(nodes, edges)
  const mapped = loadFlowNetwork(graph).study
  const endpoint: number[] = []
  const solve: number[] = []
  for (let r = 0; r < runs; r++) {
    let started = process.hrtime.bigint()
    const answer = loadFlowStudy(graph)
    endpoint.push(Number(process.hrtime.bigint() - started) / 1e6)
    if (!answer.converged) throw new Error(`the generated ${size}-board site did not converge: ${answer.note}`)
    started = process.hrtime.bigint()
    solveLoadFlow(mapped)
    solve.push(Number(process.hrtime.bigint() - started) / 1e6)
  }
  console.log(
    `load-flow endpoint ${mapped.buses.length} buses/${mapped.branches.length} branches from ${nodes.length} nodes (seed 1)   ` +
      `graph→answer ${medianWithSpread(endpoint, ms)}   solve alone ${medianWithSpread(solve, ms)}   answer/solve: ${ratio(median(endpoint), median(solve))}   ${loadSpread([load, loadNow()])}`,
  )
}
