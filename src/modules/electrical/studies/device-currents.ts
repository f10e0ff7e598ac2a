// The current each device on a supply path carries for a fault, from the short-circuit study's fault state rather than
// the whole bus current: where a motor or a second source feeds the fault from the fault's side of a device, the
// device carries less than the bus's I″k (issue 31).
import type { Graph, SupplyPath } from '../topology.ts'
import type { SequenceBranch } from './zero-sequence.ts'

type Complex = readonly [number, number]

/** The study's network as the walk reads it: per unit on 1 MVA and the buses' nominal voltages. */
export interface FaultState {
  readonly graph: Graph
  /** The study bus of node `i`'s terminal on edge `e`. */
  readonly busOf: (i: number, e: number) => number
  /** The study bus of a one-terminal node. */
  readonly busOfNode: (i: number) => number
  readonly vn: readonly (number | null)[]
  /** The series branch of each Cable / OverheadLine edge and of each transformer node. */
  readonly branchOfEdge: ReadonlyMap<number, SequenceBranch>
  /** A transformer's branch, or a three-winding one's three arms to its star point. */
  readonly branchOfTransformer: ReadonlyMap<number, readonly SequenceBranch[]>
  /** The admittance to the reference of a node's sources (in the case solved), per unit, or none. */
  readonly shuntOf: (i: number) => Complex | null
  /** The voltage change of the fault state at a study bus, per unit (−Z_bf·I_f), or null off the faulted part. */
  readonly dv: (bus: number) => Complex | null
  readonly faultNode: number
  /** The fault current I_f = c/Z_ff, per unit at the faulted bus. */
  readonly faultCurrent: Complex
}

const mul = ([a, b]: Complex, [c, d]: Complex): Complex => [a * c - b * d, a * d + b * c]
const sub = ([a, b]: Complex, [c, d]: Complex): Complex => [a - c, b - d]
const scale = ([a, b]: Complex, k: number): Complex => [a * k, b * k]

/**
 * For each path index in `at`, the magnitude (kA, at the node's bus voltage) of the current entering that node from
 * the path's edge on the supply side (`edges[k]`), i.e. what a two-terminal device there carries towards the fault.
 * Kirchhoff's law over the node graph: a cable, line or transformer gives its branch current from the fault state's
 * voltages; across a zero-impedance connection (busbar link, winding connection, bus tie, a closed device) the current
 * is what the far node passes on, the sources there included. Null where the fault state does not reach.
 */
export function currentsIntoPath(state: FaultState, path: SupplyPath, at: readonly number[]): (number | null)[] {
  const { graph, busOf, vn } = state
  const { edgeSource, edgeTarget, adjStart, adjEdge } = graph
  const v = (bus: number): Complex => {
    const value = state.dv(bus)
    if (value === null) throw new RangeError('off the faulted part')
    return value
  }
  /** Current entering the branch at the end on `bus`, per unit. */
  const branchCurrent = (br: SequenceBranch, bus: number): Complex => {
    const zb = vn[br.to]! ** 2
    const d = (br.r / zb) ** 2 + (br.x / zb) ** 2
    const y: Complex = [br.r / zb / d, -br.x / zb / d]
    const [vf, vt] = [v(br.from), v(br.to)]
    return bus === br.from ? mul(y, sub(scale(vf, 1 / (br.t * br.t)), scale(vt, 1 / br.t))) : mul(y, sub(vt, scale(vf, 1 / br.t)))
  }
  /** Current flowing along edge `e` into node `into`; null when it is what `into` draws on (no branch on `e`). */
  const branchAlong = (e: number, into: number): Complex | null => {
    const branch = state.branchOfEdge.get(e)
    return branch === undefined ? null : scale(branchCurrent(branch, busOf(into, e)), -1)
  }
  /**
   * What node `i` draws from edge `via` on its own: its transformer winding (all of it), or its sources and the
   * fault; null for a node already walked (a loop of zero-impedance connections counts it once).
   */
  const own = (i: number, via: number, visited: Set<number>): { total: Complex; walk: boolean } | null => {
    const transformer = state.branchOfTransformer.get(i)
    if (transformer !== undefined) {
      const bus = busOf(i, via)
      const winding = transformer.find((br) => br.from === bus || br.to === bus)
      return { total: winding === undefined ? [0, 0] : branchCurrent(winding, bus), walk: false }
    }
    if (visited.has(i)) return null
    visited.add(i)
    let total: Complex = [0, 0]
    const shunt = state.shuntOf(i)
    if (shunt !== null) total = mul(shunt, v(state.busOfNode(i)))
    if (i === state.faultNode) total = [total[0] + state.faultCurrent[0], total[1] + state.faultCurrent[1]]
    return { total, walk: true }
  }
  /**
   * Current flowing along edge `e` into node `into`: a branch's current, or what `into` draws — into its branch, its
   * sources, the fault, and on along its other edges. Walked with a stack of its own, not the call stack: a chain of
   * zero-impedance connections can be longer than the call stack is deep.
   */
  const along = (e: number, into: number, visited: Set<number>): Complex => {
    const direct = branchAlong(e, into)
    if (direct !== null) return direct
    const first = own(into, e, visited)
    if (first === null) return [0, 0]
    if (!first.walk) return first.total
    const stack = [{ i: into, via: e, next: adjStart[into]!, re: first.total[0], im: first.total[1] }]
    for (;;) {
      const frame = stack[stack.length - 1]!
      if (frame.next === adjStart[frame.i + 1]!) {
        stack.pop()
        const parent = stack[stack.length - 1]
        if (parent === undefined) return [frame.re, frame.im]
        parent.re += frame.re
        parent.im += frame.im
        continue
      }
      const edge = adjEdge[frame.next++]!
      if (edge === frame.via) continue
      const other = edgeSource[edge] === frame.i ? edgeTarget[edge]! : edgeSource[edge]!
      const flow = branchAlong(edge, other)
      const drawn = flow === null ? own(other, edge, visited) : { total: flow, walk: false }
      if (drawn === null) continue
      if (drawn.walk) stack.push({ i: other, via: edge, next: adjStart[other]!, re: drawn.total[0], im: drawn.total[1] })
      else {
        frame.re += drawn.total[0]
        frame.im += drawn.total[1]
      }
    }
  }
  return at.map((k) => {
    const i = graph.indexOf.get(path.nodeIds[k]!)!
    const e = path.edges[k]?.index
    if (e === undefined) return null
    try {
      const [re, im] = along(e, i, new Set())
      return Math.hypot(re, im) / (Math.sqrt(3) * vn[busOf(i, e)]!)
    } catch (error) {
      if (error instanceof RangeError) return null
      throw error
    }
  })
}
