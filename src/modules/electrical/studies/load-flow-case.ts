// The input of the load flow (load-flow.ts): a bus/branch model in MATPOWER's conventions (powers in MW and Mvar on
// baseMva, voltages and impedances per unit), and the checks a case must pass before it is solved.
import { LoadFlowCaseInvalid } from './load-flow-errors.ts'

export type BusKind = 'slack' | 'pv' | 'pq'

export interface LoadFlowBus {
  id: string
  /** slack: V and angle held, P and Q solved; pv: P and V held, Q solved; pq: P and Q held, V solved. */
  kind: BusKind
  /** Voltage set-point of a slack or PV bus (required there); PQ buses start from 1 pu. */
  vSetPu?: number
  /** The slack bus's angle (default 0); the other buses start from 0. */
  angleDeg?: number
  pLoadMw?: number
  qLoadMvar?: number
  /** Generation held at PV and PQ buses; at the slack it is solved (a given value is not read there). */
  pGenMw?: number
  /** Reactive generation held at PQ buses; solved at PV and slack buses. */
  qGenMvar?: number
  /**
   * A PV bus's reactive generation limits. A PV bus that would need more (less) to hold vSetPu is held at the limit
   * instead, as a PQ bus (MATPOWER's `pf.enforce_q_lims`); only PV buses take them.
   */
  qMinMvar?: number
  qMaxMvar?: number
  /** Shunt conductance and susceptance as the MW and Mvar they draw/inject at 1 pu (MATPOWER's Gs, Bs). */
  gShuntMw?: number
  bShuntMvar?: number
}

export interface LoadFlowBranch {
  id: string
  fromBusId: string
  toBusId: string
  rPu: number
  xPu: number
  /** Total line charging susceptance (half at each end). */
  bPu?: number
  /** Off-nominal turns ratio at the from end (default 1: a line). */
  tapRatio?: number
  /** Phase shift of the from end's transformer, degrees (default 0). */
  shiftDeg?: number
  /** Thermal rating; with it a branch answers its loading. */
  ratingMva?: number
}

export interface LoadFlowCase {
  baseMva: number
  buses: readonly LoadFlowBus[]
  branches: readonly LoadFlowBranch[]
}

/** Checks the case (throws LoadFlowCaseInvalid naming the bus or branch, the field and the rule) and answers each bus id's index. */
export function checkLoadFlowCase(study: LoadFlowCase): Map<string, number> {
  const { baseMva, buses, branches } = study
  if (!(baseMva > 0 && Number.isFinite(baseMva))) throw new LoadFlowCaseInvalid({ busId: buses[0]?.id ?? '' }, 'baseMva', 'must be a positive number')
  const index = new Map<string, number>()
  for (const bus of buses) {
    const at = { busId: bus.id }
    if (index.has(bus.id)) throw new LoadFlowCaseInvalid(at, 'id', 'is used by another bus')
    index.set(bus.id, index.size)
    if (bus.kind !== 'pq' && !(bus.vSetPu !== undefined && bus.vSetPu > 0 && Number.isFinite(bus.vSetPu)))
      throw new LoadFlowCaseInvalid(at, 'vSetPu', `must be a positive number on a ${bus.kind} bus`)
    for (const field of ['angleDeg', 'pLoadMw', 'qLoadMvar', 'pGenMw', 'qGenMvar', 'gShuntMw', 'bShuntMvar', 'qMinMvar', 'qMaxMvar'] as const)
      if (bus[field] !== undefined && !Number.isFinite(bus[field])) throw new LoadFlowCaseInvalid(at, field, 'must be a finite number')
    for (const field of ['qMinMvar', 'qMaxMvar'] as const)
      if (bus[field] !== undefined && bus.kind !== 'pv') throw new LoadFlowCaseInvalid(at, field, 'is only taken on a pv bus')
    if (bus.qMinMvar !== undefined && bus.qMaxMvar !== undefined && bus.qMinMvar > bus.qMaxMvar)
      throw new LoadFlowCaseInvalid(at, 'qMaxMvar', 'must not be below qMinMvar')
  }
  const island = Int32Array.from(buses, (_, i) => i)
  const root = (i: number): number => {
    while (island[i] !== i) i = island[i] = island[island[i]!]!
    return i
  }
  const branchIds = new Set<string>()
  for (const branch of branches) {
    const at = { branchId: branch.id }
    if (branchIds.has(branch.id)) throw new LoadFlowCaseInvalid(at, 'id', 'is used by another branch')
    branchIds.add(branch.id)
    const [from, to] = [index.get(branch.fromBusId), index.get(branch.toBusId)]
    if (from === undefined) throw new LoadFlowCaseInvalid(at, 'fromBusId', 'names no bus of the case')
    if (to === undefined) throw new LoadFlowCaseInvalid(at, 'toBusId', 'names no bus of the case')
    if (from === to) throw new LoadFlowCaseInvalid(at, 'toBusId', 'equals fromBusId')
    for (const field of ['rPu', 'xPu', 'bPu', 'shiftDeg'] as const)
      if (branch[field] !== undefined && !Number.isFinite(branch[field])) throw new LoadFlowCaseInvalid(at, field, 'must be a finite number')
    if (branch.rPu === 0 && branch.xPu === 0) throw new LoadFlowCaseInvalid(at, 'xPu', 'must not be 0 when rPu is 0 (a zero impedance; merge the two buses)')
    if (branch.tapRatio !== undefined && !(branch.tapRatio > 0 && Number.isFinite(branch.tapRatio)))
      throw new LoadFlowCaseInvalid(at, 'tapRatio', 'must be a positive number')
    if (branch.ratingMva !== undefined && !(branch.ratingMva > 0 && Number.isFinite(branch.ratingMva)))
      throw new LoadFlowCaseInvalid(at, 'ratingMva', 'must be a positive number')
    island[root(from)] = root(to)
  }
  const hasSlack = new Set(buses.flatMap((b, i) => (b.kind === 'slack' ? [root(i)] : [])))
  const orphan = buses.findIndex((_, i) => !hasSlack.has(root(i)))
  if (orphan >= 0) throw new LoadFlowCaseInvalid({ busId: buses[orphan]!.id }, 'kind', 'is in an island without a slack bus')
  return index
}
