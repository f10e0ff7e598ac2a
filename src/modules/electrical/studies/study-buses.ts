// What the short-circuit study and the load flow share: the buses they compute on and the reading of the nodes' study
// parameters, so that both name the same buses and refuse missing data the same way.
import { EdgeType, NodeType } from '../codes.ts'
import type { MissingStudyData } from '../errors.ts'
import { buildBuses, UnionFind } from '../pandapower.ts'
import type { ElectricalNode, Graph } from '../topology.ts'
import { cableFromSize } from './cable-table.ts'

/** A cable read from the cable table because its node has a readable cableSize and no per-km values of its own. */
export interface CableFromSizeUsed {
  readonly nodeId: string
  readonly cableSize: string
  readonly rOhmPerKm: number
  readonly xOhmPerKm: number
}

/**
 * The study buses of `graph`: the pandapower export's buses (`buildBuses`), with the buses that closed switching
 * devices and bus ties join (zero impedance) merged into one, `bus(b)` being a merged bus's representative. A bus's
 * nominal voltage is the first its nodes state (`conflicts`: the nodes that state another), and it is named after the
 * first node on it that is not a two-terminal device (else after a device terminal).
 */
export function studyBuses(graph: Graph) {
  const { nodes, edges, edgeSource, edgeTarget } = graph
  const conflicts: string[] = []
  const model = buildBuses(graph, (_code, _message, nodeId) => conflicts.push(nodeId))
  const { busCount, busName, termBase, isPair, isTriple } = model
  const merged = new UnionFind(busCount)
  for (let e = 0; e < edges.length; e++) {
    if (edges[e]!.edgeType === EdgeType.BusTie) merged.union(model.busOf(edgeSource[e]!, e), model.busOf(edgeTarget[e]!, e))
  }
  for (let i = 0; i < nodes.length; i++) {
    if (isPair(i) && nodes[i]!.nodeType !== NodeType.PowerTransformer) merged.union(model.busOfTerm[termBase[i]!]!, model.busOfTerm[termBase[i]! + 1]!)
  }
  const bus = (b: number) => merged.find(b)
  const busOfTerm = (t: number) => bus(model.busOfTerm[t]!)
  const busOfNode = (i: number) => busOfTerm(termBase[i]!)
  const vn: (number | null)[] = new Array<number | null>(busCount).fill(null)
  for (let b = 0; b < busCount; b++) if (model.vn[b] != null && vn[bus(b)] == null) vn[bus(b)] = model.vn[b]!
  // The nodes on each bus (a closed switching device with both sides on it too; a transformer sits between two or three).
  const nodesOnBus = new Map<number, string[]>()
  const namedBy = new Map<number, string>()
  for (let i = 0; i < nodes.length; i++) {
    if ((isPair(i) && nodes[i]!.nodeType === NodeType.PowerTransformer) || isTriple(i)) continue
    const b = busOfNode(i)
    const here = nodesOnBus.get(b)
    if (here) here.push(nodes[i]!.id)
    else nodesOnBus.set(b, [nodes[i]!.id])
    if (!isPair(i) && !namedBy.has(b)) namedBy.set(b, nodes[i]!.id)
  }
  /**
   * The buses of three-winding transformer `i`'s HV, MV and LV windings: the connections to the neighbours its
   * `hvNodeId`, `mvNodeId`, `lvNodeId` name; null (each one missing reported to `need`) when one names none.
   */
  const windingBuses = (i: number, need: (node: ElectricalNode, parameter: string, reason: string) => void): [number, number, number] | null => {
    const { adjStart, adjNode } = graph
    const node = nodes[i]!
    const found = (['hvNodeId', 'mvNodeId', 'lvNodeId'] as const).map((parameter) => {
      const id = node.study?.[parameter]
      const at = typeof id === 'string' ? model.busToward(i, id) : null
      if (at === null) {
        const ids = Array.from(adjNode.subarray(adjStart[i]!, adjStart[i + 1]!), (k) => nodes[k]!.id)
        const which = `the neighbour the ${parameter.slice(0, 2).toUpperCase()} winding connects to, one of ${ids.join(', ')}`
        need(node, parameter, typeof id === 'string' ? `names ${id}, not ${which}` : which)
      }
      return at === null ? -1 : bus(at)
    })
    return found.includes(-1) ? null : (found as [number, number, number])
  }
  return {
    busCount,
    windingBuses,
    termBase,
    isPair,
    isTriple,
    conflicts,
    bus,
    busOf: (i: number, e: number) => bus(model.busOf(i, e)),
    busOfTerm,
    busOfNode,
    vn,
    nodesOnBus,
    nameOf: (b: number) => namedBy.get(b) ?? busName[b]!,
  }
}

/** Reads nodes' study parameters, collecting every one missing (never a default): the study's 422 lists them all. */
export function studyParameters() {
  const missing: MissingStudyData[] = []
  const cablesFromSize: CableFromSizeUsed[] = []
  const need = (node: ElectricalNode, parameter: string, reason: string) => missing.push({ nodeId: node.id, parameter, reason })
  const num = (node: ElectricalNode, parameter: string, reason: string): number => {
    const value = node.study?.[parameter]
    if (typeof value === 'number') return value
    need(node, parameter, reason)
    return Number.NaN
  }
  /**
   * The series impedance (ohms) of the cable or line (`edgeType`) feeding `fed`: its cableLengthM times its own
   * per-km values, else the cable table's for its cableSize (listed in `cablesFromSize`).
   */
  const cableOhms = (fed: ElectricalNode, edgeType: number): { rOhm: number; xOhm: number } => {
    const reason = 'the cable or line feeding this node'
    const lengthM = fed.cableLengthM ?? null
    if (lengthM === null) need(fed, 'cableLengthM', reason)
    else if (!(lengthM > 0)) need(fed, 'cableLengthM', `${reason}: a length of 0 m has no impedance (join the nodes with a BusbarLink instead)`)
    const own = typeof fed.study?.rOhmPerKm === 'number' && typeof fed.study?.xOhmPerKm === 'number'
    const table = !own && edgeType === EdgeType.Cable && fed.cableSize ? cableFromSize(fed.cableSize) : null
    if (table !== null) cablesFromSize.push({ nodeId: fed.id, cableSize: fed.cableSize!, rOhmPerKm: table.rOhmPerKm, xOhmPerKm: table.xOhmPerKm })
    const sizeHint = edgeType === EdgeType.Cable ? `${reason} (or a cableSize the cable table reads, e.g. "185mm² Cu")` : reason
    const r = table?.rOhmPerKm ?? num(fed, 'rOhmPerKm', sizeHint)
    const x = table?.xOhmPerKm ?? num(fed, 'xOhmPerKm', sizeHint)
    return { rOhm: (r * (lengthM ?? 0)) / 1000, xOhm: (x * (lengthM ?? 0)) / 1000 }
  }
  return { missing, need, num, cablesFromSize, cableOhms }
}

interface Impedance {
  readonly r: number
  readonly x: number
}

/** IEC 60909-0 eq. 10: the star of a three-winding transformer from its pairs' impedances ZAB, ZAC, ZBC (any one reference side). */
export function starEquivalent(ab: Impedance, ac: Impedance, bc: Impedance): [Impedance, Impedance, Impedance] {
  const half = (p: Impedance, q: Impedance, m: Impedance) => ({ r: (p.r + q.r - m.r) / 2, x: (p.x + q.x - m.x) / 2 })
  return [half(ab, ac, bc), half(bc, ab, ac), half(ac, bc, ab)]
}
