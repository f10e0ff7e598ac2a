import type { Graph } from '../topology.ts'
import { solveLoadFlow } from './load-flow.ts'
import { BASE_MVA, loadFlowNetwork, type LoadFlowNetwork, type MappedBranch } from './load-flow-network.ts'

/** Newton steps before the answer reports `converged: false`, and the largest mismatch accepted (per unit of BASE_MVA). */
export const LOAD_FLOW_MAX_ITERATIONS = 20
export const LOAD_FLOW_TOLERANCE_PU = 1e-8

export interface LoadFlowBusAnswer {
  readonly busId: string
  readonly nodeIds: string[]
  readonly nominalVoltageKv: number
  readonly busKind: 'slack' | 'pv' | 'pq'
  readonly voltagePu: number
  readonly voltageV: number
  readonly angleDeg: number
  readonly pGenKw: number
  readonly qGenKvar: number
  readonly pLoadKw: number
  readonly qLoadKvar: number
}

export interface LoadFlowBranchAnswer {
  readonly branchId: string
  readonly kind: MappedBranch['kind']
  readonly nodeId: string
  readonly fromBusId: string
  readonly toBusId: string
  readonly pFromKw: number
  readonly qFromKvar: number
  readonly pToKw: number
  readonly qToKvar: number
  readonly currentFromA: number
  readonly currentToA: number
  readonly lossKw: number
  readonly lossKvar: number
  /** Against the cable's ampacityA or the transformer's rated power; null where the data holds no rating. */
  readonly loadingPercent: number | null
}

export interface LoadFlowStudy {
  readonly method: string
  readonly converged: boolean
  readonly iterations: number
  /** Largest P or Q mismatch at the last step, kVA (null when it is not a finite number). */
  readonly maxMismatchKva: number | null
  /** Why a case did not converge, and where; absent when it converged. */
  readonly note?: string
  readonly assumed: LoadFlowNetwork['assumed'] & { readonly baseMva: number; readonly maxIterations: number; readonly tolerancePu: number }
  readonly buses: LoadFlowBusAnswer[]
  readonly branches: LoadFlowBranchAnswer[]
  readonly lossKw: number
  readonly lossKvar: number
  readonly unsuppliedBusIds: string[]
}

const SQRT3 = Math.sqrt(3)

/** The load flow of the stored network (load-flow-network.ts's model); 422 `StudyDataMissing` naming what it lacks. */
export function loadFlowStudy(graph: Graph): LoadFlowStudy {
  const network = loadFlowNetwork(graph)
  const common = {
    method: 'Newton–Raphson, polar, sparse LU (studies/load-flow.ts); bus/branch model of studies/load-flow-network.ts',
    assumed: { ...network.assumed, baseMva: BASE_MVA, maxIterations: LOAD_FLOW_MAX_ITERATIONS, tolerancePu: LOAD_FLOW_TOLERANCE_PU },
    unsuppliedBusIds: network.unsuppliedBusIds,
  }
  if (network.study.buses.length === 0) return { ...common, converged: true, iterations: 0, maxMismatchKva: 0, buses: [], branches: [], lossKw: 0, lossKvar: 0 }
  const result = solveLoadFlow(network.study, { maxIterations: LOAD_FLOW_MAX_ITERATIONS, tolerancePu: LOAD_FLOW_TOLERANCE_PU })
  const mismatchKva = Number.isFinite(result.maxMismatchMva) ? result.maxMismatchMva * 1000 : null
  if (!result.converged) {
    return {
      ...common,
      converged: false,
      iterations: result.iterations,
      maxMismatchKva: mismatchKva,
      note:
        `No solution: ${result.reason} after ${result.iterations} iteration(s), largest mismatch at bus ${JSON.stringify(result.worstBusId)}. ` +
        'The demand may exceed what the network can carry, or a parameter may be off by a unit (check the loads and the impedances).',
      buses: [],
      branches: [],
      lossKw: 0,
      lossKvar: 0,
    }
  }
  const vKv = new Map(result.buses.map((bus, k) => [bus.id, bus.vPu * network.buses[k]!.nominalVoltageKv]))
  const buses = result.buses.map((bus, k): LoadFlowBusAnswer => {
    const { busId, nodeIds, nominalVoltageKv } = network.buses[k]!
    const given = network.study.buses[k]!
    return {
      busId,
      nodeIds,
      nominalVoltageKv,
      busKind: given.kind,
      voltagePu: bus.vPu,
      voltageV: bus.vPu * nominalVoltageKv * 1000,
      angleDeg: bus.angleDeg,
      pGenKw: bus.pGenMw * 1000,
      qGenKvar: bus.qGenMvar * 1000,
      pLoadKw: (given.pLoadMw ?? 0) * 1000,
      qLoadKvar: (given.qLoadMvar ?? 0) * 1000,
    }
  })
  const branches = result.branches.map((flow, k): LoadFlowBranchAnswer => {
    const mapped = network.branches[k]!
    const { fromBusId, toBusId } = network.study.branches[k]!
    // |S| / (√3·|V|): MVA over kV is kA.
    const currentFromA = (1000 * Math.hypot(flow.pFromMw, flow.qFromMvar)) / (SQRT3 * vKv.get(fromBusId)!)
    const currentToA = (1000 * Math.hypot(flow.pToMw, flow.qToMvar)) / (SQRT3 * vKv.get(toBusId)!)
    return {
      branchId: mapped.branchId,
      kind: mapped.kind,
      nodeId: mapped.nodeId,
      fromBusId,
      toBusId,
      pFromKw: flow.pFromMw * 1000,
      qFromKvar: flow.qFromMvar * 1000,
      pToKw: flow.pToMw * 1000,
      qToKvar: flow.qToMvar * 1000,
      currentFromA,
      currentToA,
      lossKw: flow.lossMw * 1000,
      lossKvar: flow.lossMvar * 1000,
      loadingPercent: loading(mapped, currentFromA, currentToA),
    }
  })
  return {
    ...common,
    converged: true,
    iterations: result.iterations,
    maxMismatchKva: mismatchKva,
    buses,
    branches,
    lossKw: result.lossMw * 1000,
    lossKvar: result.lossMvar * 1000,
  }
}

/**
 * A circuit's larger end current over its ampacity; a transformer's larger winding current times its rated voltage
 * over its rated power (as pandapower's trafo loading_percent), the HV side being the branch's from end.
 */
function loading(branch: MappedBranch, currentFromA: number, currentToA: number): number | null {
  if (branch.transformer !== undefined) {
    const { ratedPowerKva, hvRatedVoltageKv, lvRatedVoltageKv } = branch.transformer
    return (100 * SQRT3 * Math.max(currentFromA * hvRatedVoltageKv, currentToA * lvRatedVoltageKv)) / ratedPowerKva
  }
  return branch.ampacityA === undefined ? null : (100 * Math.max(currentFromA, currentToA)) / branch.ampacityA
}
