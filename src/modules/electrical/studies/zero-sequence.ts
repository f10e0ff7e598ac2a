// The zero-sequence network of the earth-fault (single-phase-to-earth) currents, IEC 60909-0 §6.3 and §7.x: which
// branches pass zero sequence, where it finds earth, and which data the network lacks for it. The short-circuit study
// (short-circuit.ts) fills it while it reads the positive sequence and solves it on the same sparse factors.
import type { MissingStudyData } from '../errors.ts'
import { UnionFind } from '../pandapower.ts'
import type { ElectricalNode } from '../topology.ts'

export type Case = 'max' | 'min'

/** A series element between two buses. */
export interface SequenceBranch {
  readonly from: number
  readonly to: number
  /** Impedance in ohms referred to the `to` side's nominal voltage. */
  readonly r: number
  readonly x: number
  /** Off-nominal ratio on the `from` side (1 for a line). */
  readonly t: number
}

/** An impedance from a bus to the reference (earth in the zero sequence), per case (null: absent in that case). */
export interface SequenceShunt {
  readonly bus: number
  readonly zOhm: Record<Case, readonly [number, number] | null>
}

/**
 * What a transformer's vector group does to the zero sequence (the HV winding first, `N`/`n` an earthed star point):
 * a delta opposite an earthed star earths the star side through uk(0) (`hvShunt` for YNd, `lvShunt` for Dyn); two
 * earthed stars pass it through (`series`, YNyn; the magnetising zero-sequence impedance neglected); anything else
 * blocks it (an unearthed star, or an earthed star opposite an unearthed one, whose only path is the magnetising
 * zero-sequence impedance, neglected); zig-zag windings are not modelled.
 */
export function zeroSequenceOf(vectorGroup: string): 'hvShunt' | 'lvShunt' | 'series' | 'blocked' | 'zigzag' {
  const match = /^([YyDdZz])([Nn]?)([YyDdZz])([Nn]?)/.exec(vectorGroup)
  if (match === null) return 'blocked'
  const [, hv, hvEarthed, lv, lvEarthed] = match
  if (/z/i.test(hv!) || /z/i.test(lv!)) return 'zigzag'
  if (hvEarthed && lvEarthed) return 'series'
  if (hvEarthed && /d/i.test(lv!)) return 'hvShunt'
  if (lvEarthed && /d/i.test(hv!)) return 'lvShunt'
  return 'blocked'
}

/** The zero-sequence network as the study reads it: elements, the buses zero sequence joins, and what is missing. */
export function zeroSequenceNetwork(busCount: number) {
  const branches: SequenceBranch[] = []
  const shunts: SequenceShunt[] = []
  /** Line capacitances to earth: in the zero-sequence matrix, but no path to earth of their own (see `classify`). */
  const capacitances: SequenceShunt[] = []
  /** Buses joined in the zero sequence (lines and YNyn transformers, whether or not their data is complete). */
  const parts = new UnionFind(busCount)
  /** Each missing parameter with the buses whose zero-sequence part it leaves incomplete. */
  const missing: { readonly item: MissingStudyData; readonly buses: readonly number[] }[] = []
  const need = (node: ElectricalNode, parameter: string, reason: string, buses: readonly number[]) =>
    missing.push({ item: { nodeId: node.id, parameter, reason: `earth faults: ${reason}` }, buses })
  const num = (node: ElectricalNode, parameter: string, reason: string, buses: readonly number[]): number => {
    const value = node.study?.[parameter]
    if (typeof value === 'number') return value
    need(node, parameter, reason, buses)
    return Number.NaN
  }
  /** 3·ZN of a star point's earthing impedance (0 when directly earthed). */
  const earthing = (node: ElectricalNode): readonly [number, number] => {
    const r = node.study?.neutralEarthingROhm
    const x = node.study?.neutralEarthingXOhm
    return [3 * (typeof r === 'number' ? r : 0), 3 * (typeof x === 'number' ? x : 0)]
  }
  const join = (a: number, b: number) => parts.union(a, b)

  /**
   * The buses whose earth-fault current can be computed, of `studied`: their zero-sequence part holds a path to earth
   * and lacks no data. `incomplete` lacks data (`missing` lists what, for those buses), `unearthed` has no path.
   */
  const classify = (studied: readonly number[]) => {
    const incompleteParts = new Set<number>()
    for (const m of missing) for (const b of m.buses) incompleteParts.add(parts.find(b))
    const earthedParts = new Set<number>(shunts.map((s) => parts.find(s.bus)))
    const computed: number[] = []
    const incomplete: number[] = []
    const unearthed: number[] = []
    for (const b of studied) {
      const part = parts.find(b)
      if (incompleteParts.has(part)) incomplete.push(b)
      else if (earthedParts.has(part)) computed.push(b)
      else unearthed.push(b)
    }
    const studiedParts = new Set(studied.map((b) => parts.find(b)))
    const relevant = missing.filter((m) => m.buses.some((b) => studiedParts.has(parts.find(b)))).map((m) => m.item)
    return { computed, incomplete, unearthed, missing: relevant }
  }
  return { branches, shunts, capacitances, need, num, earthing, join, classify }
}
