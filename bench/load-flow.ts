// Issue 31: the Newton–Raphson load flow on a generated 5 000-bus network (BENCH_LF_BUSES), time and memory, against
// the same solve on a network a tenth the size in the same run: a sparse solver's time grows about with the bus count
// (the ratio near 10x), where a dense Jacobian's LU would grow with its cube. Needs no database.
import type { LoadFlowBranch, LoadFlowBus, LoadFlowCase } from '../src/modules/electrical/studies/load-flow-case.ts'
import { solveLoadFlow } from '../src/modules/electrical/studies/load-flow.ts'
import { median, ratio } from './lib.ts'

/**
 * A plant-and-distribution-like network of `size` buses, deterministic from `seed`: a grid infeed (slack) feeding a
 * tree of fan-out 4, a ring closed about every 100 buses (meshed), a PV generator on every 50th bus, one branch in 10 a
 * transformer with an off-nominal tap, loads of 0.05–0.11 MW at power factor ≈ 0.93.
 */
export function generatedNetwork(size: number, seed = 1): LoadFlowCase {
  let state = seed >>> 0
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32
  }
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

function measure(study: LoadFlowCase, runs: number): { ms: number; iterations: number; heapMb: number } {
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
  return { ms: median(times), iterations, heapMb }
}

export function benchLoadFlow(size: number, runs = 5): void {
  const [small, large] = [generatedNetwork(Math.round(size / 10)), generatedNetwork(size)]
  const [a, b] = [measure(small, runs), measure(large, runs)]
  console.log(
    `load-flow NR ${large.buses.length} buses/${large.branches.length} branches (seed 1)   ${b.ms.toFixed(1)} ms, ${b.iterations} iterations, ` +
      `+${b.heapMb.toFixed(1)} MB   ${small.buses.length} buses ${a.ms.toFixed(1)} ms   ${size}/${small.buses.length} buses: ${ratio(b.ms, a.ms)} time`,
  )
}
