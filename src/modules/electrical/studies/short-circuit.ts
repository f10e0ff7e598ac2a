import { EdgeType, NodeType } from '../codes.ts'
import { StudyDataMissing, StudyNotSolvable, StudyTooLarge, StudyTooManySources, TooManyContributions, type MissingStudyData } from '../errors.ts'
import { UnionFind } from '../pandapower.ts'
import type { ElectricalNode, Graph, SupplyPath } from '../topology.ts'
import { factorBlocks, orderBlockPattern, solveBlocks } from './load-flow-sparse.ts'
import { inverseDiagonal } from './sparse-inverse.ts'
import { currentsIntoPath } from './device-currents.ts'
import { starEquivalent, studyBuses, studyParameters, type CableFromSizeUsed } from './study-buses.ts'
import { zeroSequenceNetwork, zeroSequenceOf, type Case, type SequenceBranch, type SequenceShunt } from './zero-sequence.ts'
import { appendTo } from '../../../grouping.ts'

/**
 * Three-phase short-circuit currents by IEC 60909-0 (2016): the equivalent voltage source c·Un/√3 at the fault,
 * every source replaced by its internal impedance, loads, capacitances and shunts neglected. Buses are the export's
 * (pandapower.ts `buildBuses`): switching devices closed, a transformer a branch between its two buses, a cable or
 * line a branch of `cableLengthM` × (`rOhmPerKm` + j`xOhmPerKm`) of the node it feeds.
 *
 * - c-factors (Table 1): Un ≤ 1 kV cmax 1.05 (voltage tolerance +6 %) or 1.10 (+10 %, the default), cmin 0.95;
 *   Un > 1 kV cmax 1.10, cmin 1.00.
 * - Utility supply: ZQ = c·UnQ²/S″kQ with c and S″kQ of the case (max or min), RQ = rxRatio·XQ.
 * - Transformer: ZT = ukr·UrT²/SrT, RT = uRr·UrT²/SrT (or from X/R), referred through the rated ratio to the
 *   buses' nominal voltages (off-nominal ratio in the admittance matrix); corrected by KT = 0.95·cmax/(1 + 0.6·xT)
 *   with cmax of the LV side, in both cases (as pandapower does).
 * - Three-winding transformer (three connections; §6.3.2, eq. 10): the star equivalent of its three pairs' impedances,
 *   each corrected by its own KT (KTAB, KTAC, KTBC), three branches to a star point of its own (`threeWinding`).
 * - Generator: ZGK = KG·(RG + jX″d), KG = Un/(UrG·(1 + pG)) · cmax/(1 + x″d·sin φrG), RG = rxRatio·X″d.
 * - Power station unit (a generator's `unitTransformerId`, §6.7): KS (on-load tap changer) or KSO on both the
 *   generator and its transformer instead of KG and KT; at the bus between them the generator takes KG without
 *   Un/UrG, the transformer no factor, and the source is c·UrG/√3 (as pandapower does; `powerStationUnits`).
 * - Motor (maximum case only): ZM = (1/(ILR/IrM))·UrM²/SrM, SrM = PrM/(ηr·cos φr), RM = rxRatio·XM.
 * - Minimum case: cmin, the grid's minimum, no motors; cable and line resistances (both sequences) at the end
 *   temperature θe, RL = (1 + 0.004·(θe − 20 °C))·RL20 (§7.1.2; `conductorEndTemperatureC`, 20 °C unless asked).
 * - ip = κ·√2·I″k(max): κ = 1.02 + 0.98·e^(−3R/X) with R/X of the fault's impedance in a radial part of the
 *   network, by method C (equivalent frequency fc = 20 Hz at 50 Hz, 24 Hz at 60 Hz) where the part is meshed; a
 *   generator enters κ with its fictitious resistance RGf (§6.6.1: 0.05·X″d, 0.07·X″d, 0.15·X″d by voltage and power).
 * - Each source's contribution is the current through its internal impedance, referred to the faulted bus.
 * - Line-to-earth faults (§6.3.3, §7.1.2): I″k1 = √3·c·Un / |Z(1) + Z(2) + Z(0)| with Z(2) = Z(1), in both cases. The
 *   zero sequence (zero-sequence.ts): the grid's Z(0)Q = (r0x0Ratio + j)·x0x1Ratio·X(1)Q of the case; a cable or line
 *   `cableLengthM` × (`r0OhmPerKm` + j`x0OhmPerKm`), its zero-sequence capacitance where `c0NfPerKm` is given (half at each end, as
 *   pandapower; IEC 60909-0 neglects it, and it never earths a part by itself); a transformer by its vector group, KT·(uR(0) + j·uX(0))·UrT²/SrT
 *   from the star side it earths plus 3·ZN (YNd, Dyn) or through it (YNyn); an earthed generator
 *   KG·(rxRatio + j)·X(0)G + 3·ZN; motors are not earthed. Missing zero-sequence data
 *   does not fail the study: the buses it leaves without a current are listed with what they lack (`earthFaults`).
 * Not computed: UPS/battery contributions, earth faults in isolated or resonant-earthed parts (capacitive currents),
 * earth faults through a three-winding transformer with an earthed star point (`earthFaults` lists the buses it
 * leaves out), power station units in the earth faults beyond their corrected impedances. Checked within 1 % (to
 * the fourth digit) against the IEC TR 60909-4 example network (test/fixtures/electrical/iec-60909-4.json).
 */

export interface ShortCircuitOptions {
  /** Voltage tolerance of LV networks: 6 → cmax 1.05, 10 → cmax 1.10. */
  readonly lvTolerancePercent: 6 | 10
  readonly fHz: 50 | 60
  /** The minimum case's conductor temperature θe (°C, default 20): cable and line resistances times 1 + 0.004·(θe − 20). */
  readonly conductorEndTemperatureC?: number
}

/** IEC 60909-0 §7.1.2: α of copper, aluminium and aluminium alloy, per kelvin. */
const CONDUCTOR_ALPHA_PER_K = 0.004

export interface SourceContribution {
  readonly sourceId: string
  readonly sourceType: 'UtilitySupply' | 'Generator' | 'Motor'
  /** |current through the source's impedance|, referred to the faulted bus's voltage, maximum case. */
  readonly ikssKa: number
}

export interface BusShortCircuit {
  readonly busId: string
  readonly nodeIds: string[]
  readonly nominalVoltageKv: number
  readonly ikssMaxKa: number
  readonly ikssMinKa: number
  /** Line-to-line fault, Z(2) = Z(1): √3/2 of the three-phase currents (IEC 60909-0 §7.2, far from generators). */
  readonly ikssTwoPhaseMaxKa: number
  readonly ikssTwoPhaseMinKa: number
  /** Line-to-earth fault, maximum and minimum case; null where `earthFaults` says why. */
  readonly ikssEarthMaxKa: number | null
  readonly ikssEarthMinKa: number | null
  readonly ipKa: number
  readonly kappa: number
  readonly kappaMethod: 'radial' | 'C'
  /** X/R of the short-circuit impedance at the bus, maximum case. */
  readonly xrRatio: number
  readonly skssMaxMva: number
  /** How many sources contribute at the bus; `contributions` lists all of them, the largest few or none (`ContributionsView`). */
  readonly contributionCount: number
  readonly contributions: SourceContribution[]
}

/**
 * How much of the contributions an answer carries: `none`; `largest`, each bus's LARGEST_CONTRIBUTIONS largest (the
 * default: 5 000 buses × 200 motors would otherwise be 1 000 000 entries); `all`. `busId` keeps one bus, named by
 * its busId or any node on it.
 */
export interface ContributionsView {
  readonly contributions: 'none' | 'largest' | 'all'
  readonly busId?: string
}
export const LARGEST_CONTRIBUTIONS = 5
/** Missing zero-sequence parameters listed in an answer (a network without any lists two or more per cable). */
export const MAX_MISSING_LISTED = 100

export interface CorrectionFactor {
  readonly nodeId: string
  /** KTAB, KTAC, KTBC: a three-winding transformer's per pair of windings (HV A, MV B, LV C); KS, KSO: a power station unit's. */
  readonly factor: 'KT' | 'KG' | 'KTAB' | 'KTAC' | 'KTBC' | 'KS' | 'KSO'
  readonly value: number
}

export type FaultType = 'threePhase' | 'twoPhase' | 'singlePhaseToEarth'

export interface ShortCircuitResult {
  readonly faultTypes: FaultType[]
  readonly method: string
  readonly assumed: {
    readonly lvTolerancePercent: number
    readonly fHz: number
    readonly cFactors: { readonly lv: { readonly max: number; readonly min: number }; readonly mvHv: { readonly max: number; readonly min: number } }
    readonly correctionFactors: CorrectionFactor[]
    readonly notModelled: { readonly nodeId: string; readonly reason: string }[]
    readonly conductorTemperatureC: number
    readonly minCaseConductorTemperatureC: number
    readonly cablesFromSize: CableFromSizeUsed[]
  }
  readonly buses: BusShortCircuit[]
  /** Buses in parts of the network with no utility supply or generator: no fault current, not listed in `buses`. */
  readonly unsuppliedBusIds: string[]
  readonly earthFaults: {
    /** Buses whose zero-sequence part lacks data: no earth-fault current; `missing` names each node and parameter. */
    readonly incompleteBusIds: string[]
    /** The first MAX_MISSING_LISTED; `missingCount` counts them all. */
    readonly missing: MissingStudyData[]
    readonly missingCount: number
    /** Buses whose zero-sequence part has no path to earth (isolated, or behind a winding that blocks zero sequence). */
    readonly unearthedBusIds: string[]
  }
}

const { UtilitySupply, Generator, PowerTransformer, Motor, UpsBattery } = NodeType

interface UnitCorrection {
  readonly generator: number
  readonly factor: 'KS' | 'KSO'
  readonly value: number
  readonly inside: number
}

/** pG of a generator (`voltageRangePercent`), 0 when not given: it is operated at its rated voltage. */
function voltageRange(node: ElectricalNode): number {
  const p = node.study?.voltageRangePercent
  return typeof p === 'number' ? p / 100 : 0
}

/**
 * Energised buses the study accepts. The solver is sparse (load-flow-sparse.ts: minimum-degree order, one
 * factorisation a case) and reads of Z = Y⁻¹ only what it needs (sparse-inverse.ts): 0.44 s for 5 000 buses with 200 motors on the
 * development machine (bench/short-circuit.ts), on the request's thread; a larger network is refused (422) rather
 * than stalling the server. The answer lists every source's contribution at every bus: its size is buses × sources.
 */
export const MAX_STUDY_BUSES = 10_000
/**
 * Sources' shares the study keeps (sources × buses, 8 bytes each: 32 MB): a network of 10 000 buses and as many motors
 * would hold 800 MB. The bench's 5 000 buses and 200 motors keep 1 000 000.
 */
export const MAX_SOURCE_SHARES = 4_000_000
/**
 * Contributions an answer of every contribution at every bus lists at most (`contributions=all` without `busId`):
 * ~94 MB of objects at 1 000 000. Beyond, the largest of each bus or one bus's are answered.
 */
export const MAX_LISTED_CONTRIBUTIONS = 1_000_000
const SQRT3 = Math.sqrt(3)

interface Shunt extends SequenceShunt {
  readonly node: ElectricalNode
  readonly kind: SourceContribution['sourceType']
  /** A generator's impedance for the peak current (κ), with the fictitious resistance RGf of IEC 60909-0 §6.6.1, maximum case. */
  readonly peak?: readonly [number, number]
}

/** RGf/X″d for the peak current (IEC 60909-0 §6.6.1): 0.05 above 1 kV and from 100 MVA, 0.07 above 1 kV below it, 0.15 up to 1 kV. */
function fictitiousRx(urKv: number, sMva: number): number {
  if (urKv <= 1) return 0.15
  return sMva >= 100 ? 0.05 : 0.07
}

function cFactors(kv: number, options: ShortCircuitOptions): { max: number; min: number } {
  if (kv <= 1) return { max: options.lvTolerancePercent === 6 ? 1.05 : 1.1, min: 0.95 }
  return { max: 1.1, min: 1 }
}

/** The study; 422 (`StudyDataMissing`) naming every node and parameter it lacks. */
export function shortCircuitStudy(graph: Graph, options: ShortCircuitOptions, view: ContributionsView = { contributions: 'all' }): ShortCircuitResult {
  return shortCircuitSolve(graph, options).view(view)
}

/** The study and its solved network, kept together (per network version) for the protection reads. */
export interface ShortCircuitSolution {
  /** The answer without contributions (`contributionCount` still stated). */
  readonly result: ShortCircuitResult
  /** The answer as a caller asks for it (no bus when `busId` names none the study has). */
  readonly view: (view: ContributionsView) => ShortCircuitResult
  /**
   * For a three-phase fault (maximum case unless `caseName` says) at the path's first node, the current (kA) each node at a path index of
   * `at` carries in from its supply side (device-currents.ts): its branch current, not the bus's I″k. Null where the
   * study has no bus for the fault.
   */
  readonly currentsAlong: (path: SupplyPath, at: readonly number[], caseName?: Case) => (number | null)[]
}

export function shortCircuitSolve(graph: Graph, options: ShortCircuitOptions): ShortCircuitSolution {
  const { nodes, edges, edgeSource, edgeTarget, adjStart } = graph
  const { missing, need, num, cablesFromSize, cableOhms } = studyParameters()
  const notModelled: { nodeId: string; reason: string }[] = []
  const { busCount, termBase, isPair, isTriple, conflicts, bus, busOf, busOfTerm, busOfNode, vn: busVn, nodesOnBus, nameOf, windingBuses } = studyBuses(graph)
  // A three-winding transformer is three branches to a star point of its own (IEC 60909-0 eq. 10): buses
  // busCount… after the network's, at the HV side's nominal voltage.
  const starOf = new Map<number, number>()
  for (let i = 0; i < nodes.length; i++) if (isTriple(i)) starOf.set(i, busCount + starOf.size)
  const totalBuses = busCount + starOf.size
  const vn: (number | null)[] = [...busVn, ...new Array<null>(starOf.size).fill(null)]

  // Branches and energised parts: buses joined by lines and transformers.
  const branches: SequenceBranch[] = []
  const branchOfEdge = new Map<number, SequenceBranch>()
  // Cable and line branches (both sequences): the minimum case takes their resistance at the end temperature.
  const conductors = new Set<SequenceBranch>()
  const endTemperatureC = options.conductorEndTemperatureC ?? 20
  const heat = 1 + CONDUCTOR_ALPHA_PER_K * (endTemperatureC - 20)
  const inCase = (br: SequenceBranch, caseName: Case): SequenceBranch => (caseName === 'min' && conductors.has(br) ? { ...br, r: br.r * heat } : br)
  const branchOfTransformer = new Map<number, readonly SequenceBranch[]>()
  const zero = zeroSequenceNetwork(totalBuses)
  const parts = new UnionFind(totalBuses)
  const correction: CorrectionFactor[] = []
  const kvOf = (bus: number) => vn[bus] ?? Number.NaN
  for (let e = 0; e < edges.length; e++) {
    const type = edges[e]!.edgeType
    if (type !== EdgeType.Cable && type !== EdgeType.OverheadLine) continue
    const from = busOf(edgeSource[e]!, e)
    const to = busOf(edgeTarget[e]!, e)
    if (from === to) continue
    const fed = nodes[edgeTarget[e]!]!
    const { rOhm, xOhm } = cableOhms(fed, type)
    parts.union(from, to)
    const branch = { from, to, r: rOhm, x: xOhm, t: 1 }
    branches.push(branch)
    branchOfEdge.set(e, branch)
    conductors.add(branch)
    const why = 'the zero-sequence impedance of the cable or line feeding this node'
    const r0 = zero.num(fed, 'r0OhmPerKm', why, [from, to])
    const x0 = zero.num(fed, 'x0OhmPerKm', why, [from, to])
    const km = (fed.cableLengthM ?? Number.NaN) / 1000
    zero.join(from, to)
    const branch0 = { from, to, r: r0 * km, x: x0 * km, t: 1 }
    zero.branches.push(branch0)
    conductors.add(branch0)
    const c0 = fed.study?.c0NfPerKm
    if (typeof c0 === 'number') {
      // Half the line's zero-sequence capacitance at each end: −j/(ω·C/2) ohms to earth.
      const z = [0, -1 / (Math.PI * options.fHz * c0 * km * 1e-9)] as const
      for (const at of [from, to]) zero.capacitances.push({ bus: at, zOhm: { max: z, min: z } })
    }
  }
  const shunts: Shunt[] = []
  const units = powerStationUnits()
  /** Per unit: the generator's shunt and the transformer's branch as corrected for faults outside the unit. */
  const unitElements = new Map<number, { shunt?: Shunt; branch?: SequenceBranch }>()
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]!
    const at = busOfNode(i)
    if (node.nodeType === PowerTransformer && isTriple(i)) {
      threeWinding(i, node)
      continue
    }
    if (node.nodeType === PowerTransformer) {
      if (!isPair(i)) {
        need(node, 'edges', `a transformer needs two connections (three for a three-winding one), it has ${adjStart[i + 1]! - adjStart[i]!}`)
        continue
      }
      const a = busOfTerm(termBase[i]!)
      const b = busOfTerm(termBase[i]! + 1)
      const why = 'transformer impedance'
      const sMva = num(node, 'ratedPowerKva', why) / 1000
      const hvKv = num(node, 'hvRatedVoltageKv', why)
      const lvKv = num(node, 'lvRatedVoltageKv', why)
      const uk = num(node, 'ukPercent', why)
      const ur = node.study?.urPercent
      const xr = node.study?.xrRatio
      if (typeof ur !== 'number' && typeof xr !== 'number') need(node, 'urPercent', `${why} (or xrRatio)`)
      parts.union(a, b)
      if (vn[a] == null || vn[b] == null || a === b) continue
      // The HV side is the bus whose nominal voltage is nearer the HV rating.
      const aIsHv = Math.abs(Math.log(vn[a] / hvKv)) + Math.abs(Math.log(vn[b] / lvKv)) <= Math.abs(Math.log(vn[b] / hvKv)) + Math.abs(Math.log(vn[a] / lvKv))
      const [hv, lv] = aIsHv ? [a, b] : [b, a]
      const zBaseT = (lvKv * lvKv) / sMva
      const zT = (uk / 100) * zBaseT
      const rT = typeof ur === 'number' ? (ur / 100) * zBaseT : zT / Math.sqrt(1 + (xr as number) ** 2)
      const xT = Math.sqrt(Math.max(zT * zT - rT * rT, 0))
      const cmax = cFactors(kvOf(lv), options).max
      const unit = units.ofTransformer.get(i)
      const kt = unit?.value ?? (0.95 * cmax) / (1 + (0.6 * xT) / zBaseT)
      correction.push({ nodeId: node.id, factor: unit?.factor ?? 'KT', value: kt })
      // ZT at the LV rating, per unit on the LV bus's nominal voltage; the rated ratio over the ratio of the
      // nominal voltages is the off-nominal ratio on the HV side.
      const t = hvKv / lvKv / (kvOf(hv) / kvOf(lv))
      const branch = { from: hv, to: lv, r: kt * rT, x: kt * xT, t }
      branches.push(branch)
      branchOfTransformer.set(i, [branch])
      if (unit !== undefined) unitElements.set(unit.generator, { ...unitElements.get(unit.generator), branch })
      const group = node.study?.vectorGroup
      const kind = typeof group === 'string' ? zeroSequenceOf(group) : null
      if (kind === null) zero.need(node, 'vectorGroup', 'which windings pass zero sequence and which are earthed', [hv, lv])
      else if (kind === 'zigzag') zero.need(node, 'vectorGroup', `zig-zag windings (${group}) are not modelled`, [hv, lv])
      else if (kind !== 'blocked') {
        // uk(0) from the earthed winding (the LV one for YNyn, as ukr), at that winding's rated voltage.
        const onHv = kind === 'hvShunt'
        const sides = kind === 'series' ? [hv, lv] : [onHv ? hv : lv]
        const why0 = 'the zero-sequence impedance of the transformer'
        const uk0 = zero.num(node, 'uk0Percent', why0, sides)
        const ur0 = zero.num(node, 'ur0Percent', why0, sides)
        const zBase0 = (onHv ? hvKv : lvKv) ** 2 / sMva
        const r0 = (ur0 / 100) * zBase0
        const x0 = Math.sqrt(Math.max(((uk0 / 100) * zBase0) ** 2 - r0 * r0, 0))
        if (kind === 'series') {
          zero.join(hv, lv)
          zero.branches.push({ from: hv, to: lv, r: kt * r0, x: kt * x0, t })
        } else {
          const [rn, xn] = zero.earthing(node)
          const z = [kt * r0 + rn, kt * x0 + xn] as const
          zero.shunts.push({ bus: sides[0]!, zOhm: { max: z, min: z } })
        }
      } else if (/n/i.test(group as string)) {
        notModelled.push({
          nodeId: node.id,
          reason: `earth faults: ${group as string} passes no zero sequence (its magnetising zero-sequence impedance is neglected)`,
        })
      }
      continue
    }
    if (node.nodeType === UtilitySupply) {
      const why = 'network feeder impedance'
      const rx = num(node, 'rxRatio', why)
      const s = node.study ?? {}
      const kv = vn[at]
      const power = (mva: string, ka: string, caseName: Case): number => {
        if (typeof s[mva] === 'number') return s[mva]
        if (typeof s[ka] === 'number') return SQRT3 * (kv ?? Number.NaN) * s[ka]
        need(node, mva, `${why}, ${caseName}imum case (or ${ka})`)
        return Number.NaN
      }
      const sMax = power('scPowerMaxMva', 'scCurrentMaxKa', 'max')
      const sMin = power('scPowerMinMva', 'scCurrentMinKa', 'min')
      const z = (c: number, sMva: number) => {
        const zq = (c * (kv ?? Number.NaN) ** 2) / sMva
        const xq = zq / Math.sqrt(1 + rx * rx)
        return [rx * xq, xq] as const
      }
      const c = cFactors(kv ?? Number.NaN, options)
      const zMaxQ = z(c.max, sMax)
      const zMinQ = z(c.min, sMin)
      shunts.push({ bus: at, node, kind: 'UtilitySupply', zOhm: { max: zMaxQ, min: zMinQ } })
      const why0 = 'the zero-sequence impedance of the grid'
      const x0x1 = zero.num(node, 'x0x1Ratio', why0, [at])
      const r0x0 = zero.num(node, 'r0x0Ratio', why0, [at])
      const z0 = (xq: number) => [r0x0 * x0x1 * xq, x0x1 * xq] as const
      zero.shunts.push({ bus: at, zOhm: { max: z0(zMaxQ[1]), min: z0(zMinQ[1]) } })
    } else if (node.nodeType === Generator) {
      const why = 'generator subtransient impedance'
      const sMva = num(node, 'ratedPowerKva', why) / 1000
      const urKv = num(node, 'ratedVoltageKv', why)
      const xd = num(node, 'xdSubtransientPercent', why) / 100
      const rx = num(node, 'rxRatio', why)
      const cosPhi = num(node, 'powerFactor', why)
      const kv = vn[at] ?? Number.NaN
      const xdOhm = (xd * urKv * urKv) / sMva
      const pG = voltageRange(node)
      const unit = units.ofGenerator.get(i)
      const kg = unit?.value ?? ((kv / (urKv * (1 + pG))) * cFactors(kv, options).max) / (1 + xd * Math.sqrt(Math.max(1 - cosPhi * cosPhi, 0)))
      correction.push({ nodeId: node.id, factor: unit?.factor ?? 'KG', value: kg })
      const z = [kg * rx * xdOhm, kg * xdOhm] as const
      const peak = [kg * fictitiousRx(urKv, sMva) * xdOhm, kg * xdOhm] as const
      const shunt: Shunt = { bus: at, node, kind: 'Generator', zOhm: { max: z, min: z }, peak }
      shunts.push(shunt)
      if (unit !== undefined) unitElements.set(i, { ...unitElements.get(i), shunt })
      const earthed = node.study?.neutralEarthing
      if (earthed === undefined) zero.need(node, 'neutralEarthing', 'whether the star point is earthed', [at])
      else if (earthed === 'earthed') {
        const x0Ohm = (zero.num(node, 'x0Percent', 'the zero-sequence impedance of the generator', [at]) / 100) * ((urKv * urKv) / sMva)
        const [rn, xn] = zero.earthing(node)
        const z0 = [kg * rx * x0Ohm + rn, kg * x0Ohm + xn] as const
        zero.shunts.push({ bus: at, zOhm: { max: z0, min: z0 } })
      }
    } else if (node.nodeType === Motor) {
      const why = 'motor locked-rotor impedance'
      const pMw = num(node, 'ratedPowerKw', why) / 1000
      const urKv = num(node, 'ratedVoltageKv', why)
      const cosPhi = num(node, 'powerFactor', why)
      const eta = num(node, 'efficiencyPercent', why) / 100
      const lrc = num(node, 'lockedRotorRatio', why)
      const rx = num(node, 'rxRatio', why)
      const zm = ((1 / lrc) * urKv * urKv) / (pMw / (eta * cosPhi))
      const xm = zm / Math.sqrt(1 + rx * rx)
      shunts.push({ bus: at, node, kind: 'Motor', zOhm: { max: [rx * xm, xm], min: null } })
    } else if (node.nodeType === UpsBattery) {
      notModelled.push({ nodeId: node.id, reason: 'UPS / battery: no short-circuit model, assumed not to contribute' })
    }
  }

  // The studied buses: those of a part holding a utility supply or a generator.
  const fed = new Set<number>()
  for (const shunt of shunts) if (shunt.kind !== 'Motor') fed.add(parts.find(shunt.bus))
  const index = new Int32Array(totalBuses).fill(-1)
  const studied: number[] = []
  const unsuppliedBusIds: string[] = []
  // Star points last (busCount…): the answer's buses are studied[0…busesListed).
  for (let b = 0; b < totalBuses; b++) {
    if (b < busCount && bus(b) !== b) continue
    if (fed.has(parts.find(b)) && (b < busCount || vn[b] != null)) {
      index[b] = studied.length
      studied.push(b)
    } else if (b < busCount) unsuppliedBusIds.push(nameOf(b))
  }
  const busesListed = studied.filter((b) => b < busCount).length
  for (const b of studied) {
    if (vn[b] == null) missing.push({ nodeId: nameOf(b), parameter: 'ratedVoltageV', reason: 'the nominal voltage of the bus' })
  }
  const relevant = missing.filter((m) => {
    const i = graph.indexOf.get(m.nodeId)
    return i === undefined || index[busOfNode(i)] !== -1
  })
  if (relevant.length > 0) throw new StudyDataMissing('short-circuit study', relevant)
  if (studied.length > MAX_STUDY_BUSES) throw new StudyTooLarge('short-circuit study', studied.length, MAX_STUDY_BUSES)
  if (conflicts.length > 0)
    notModelled.push(...conflicts.map((nodeId) => ({ nodeId, reason: 'ratedVoltageV differs from another node on its bus; the first was used' })))

  // Meshed parts: more branches than a spanning forest of the part needs.
  const branchCount = new Map<number, number>()
  const busesInPart = new Map<number, number>()
  for (const br of branches) branchCount.set(parts.find(br.from), (branchCount.get(parts.find(br.from)) ?? 0) + 1)
  for (const b of studied) busesInPart.set(parts.find(b), (busesInPart.get(parts.find(b)) ?? 0) + 1)
  const meshed = (b: number) => (branchCount.get(parts.find(b)) ?? 0) > (busesInPart.get(parts.find(b)) ?? 0) - 1

  const n = studied.length
  const fc = options.fHz === 50 ? 20 : 24
  // Y as 2×2 real blocks of complex numbers on the bus graph's pattern, ordered and factored sparsely.
  const pattern = orderBlockPattern(
    n,
    branches.flatMap((br) => (index[br.from] === -1 || index[br.to] === -1 ? [] : [[index[br.from]!, index[br.to]!] as const])),
    'short-circuit study',
  )
  /** Y of one sequence on `on` (the buses of `idx` ≠ −1), factored: positive and negative share it, zero has its own. */
  const factor = (
    on: ReturnType<typeof orderBlockPattern>,
    idx: Int32Array,
    series: readonly SequenceBranch[],
    toEarth: readonly SequenceShunt[],
    caseName: Case,
    xScale: number,
  ) => {
    const values = new Float64Array(4 * on.blockCount)
    const add = (i: number, j: number, g: number, b: number) => {
      const at = on.slot[i]!.get(j)!
      values[at] = values[at]! + g
      values[at + 1] = values[at + 1]! - b
      values[at + 2] = values[at + 2]! + b
      values[at + 3] = values[at + 3]! + g
    }
    for (const stated of series) {
      const br = inCase(stated, caseName)
      const f = idx[br.from]!
      const t = idx[br.to]!
      if (f === -1 || t === -1) continue
      const zb = vn[br.to]! ** 2 // per unit on 1 MVA
      const r = br.r / zb
      const x = (br.x * xScale) / zb
      const d = r * r + x * x
      const g = r / d
      const b = -x / d
      add(f, f, g / (br.t * br.t), b / (br.t * br.t))
      add(t, t, g, b)
      add(f, t, -g / br.t, -b / br.t)
      add(t, f, -g / br.t, -b / br.t)
    }
    for (const s of toEarth) {
      const z = s.zOhm[caseName]
      const k = idx[s.bus]!
      if (z === null || k === -1) continue
      const zb = vn[s.bus]! ** 2
      const r = z[0] / zb
      const x = (z[1] * xScale) / zb
      const d = r * r + x * x
      add(k, k, r / d, -x / d)
    }
    const inverses = new Float64Array(4 * on.size)
    // Every studied part holds an impedance to the reference: Y is regular unless an impedance is 0 or huge.
    const singular = factorBlocks(on, values, inverses)
    if (singular !== -1) throw new StudyNotSolvable('short-circuit study', nameOf(idx.indexOf(singular)))
    return { values, inverses }
  }
  const factored = (caseName: Case, xScale: number) => factor(pattern, index, branches, shunts, caseName, xScale)
  /** Z_kk for every studied bus k: (re, im) at 2k, 2k + 1. */
  const diagonal = ({ values, inverses }: ReturnType<typeof factored>) => inverseDiagonal(pattern, values, inverses)
  const buses: BusShortCircuit[] = []
  const earth = zero.classify(studied.slice(0, busesListed))
  if (n === 0) return { result: result(), view: () => result(), currentsAlong: (_path, at) => at.map(() => null) }
  // The zero sequence on the buses that have it complete and earthed: Z(0)kk, (re, im) at 2k, 2k + 1 of index0.
  const index0 = new Int32Array(totalBuses).fill(-1)
  earth.computed.forEach((b, k) => {
    index0[b] = k
  })
  const pattern0 = orderBlockPattern(
    earth.computed.length,
    zero.branches.flatMap((br) => (index0[br.from] === -1 || index0[br.to] === -1 ? [] : [[index0[br.from]!, index0[br.to]!] as const])),
    'short-circuit study',
  )
  const zero0 = (caseName: Case) => {
    const { values, inverses } = factor(pattern0, index0, zero.branches, [...zero.shunts, ...zero.capacitances], caseName, 1)
    return inverseDiagonal(pattern0, values, inverses)
  }
  const z0Max = earth.computed.length > 0 ? zero0('max') : null
  const z0Min = earth.computed.length > 0 ? zero0('min') : null
  /** I″k1 = √3·c / |2·Z(1) + Z(0)| per unit on 1 MVA, times iBase·√3 = 1/Un. */
  const earthFault = (b: number, c: number, z1: Float64Array, k: number, z0: Float64Array | null) => {
    const k0 = index0[b]!
    if (k0 === -1 || z0 === null) return null
    return (Math.sqrt(3) * c) / (vn[b]! * Math.hypot(2 * z1[2 * k]! + z0[2 * k0]!, 2 * z1[2 * k + 1]! + z0[2 * k0 + 1]!))
  }
  const min = factored('min', 1)
  const zMin = diagonal(min)
  // κ from the peak impedances: generators with RGf instead of RG (IEC 60909-0 §6.6.1).
  const forPeak = (list: readonly Shunt[]): SequenceShunt[] => list.map((s) => (s.peak === undefined ? s : { bus: s.bus, zOhm: { max: s.peak, min: null } }))
  const peakShunts = forPeak(shunts)
  const zFc = studied.some(meshed) ? diagonal(factor(pattern, index, branches, peakShunts, 'max', fc / options.fHz)) : null
  const max = factored('max', 1)
  const zPeak = shunts.some((s) => s.peak !== undefined) && !studied.every(meshed) ? diagonal(factor(pattern, index, branches, peakShunts, 'max', 1)) : null
  const zMax = diagonal(max)
  // I_s = y_s · Z_jk · I_f with I_f = c / Z_kk (per unit), referred to the faulted bus k: column j of Z (Z is
  // symmetric) gives Z_jk for every k, one sparse solve per bus holding sources.
  // Each source's share at every bus, one column a source (8 bytes a bus), materialised only for the answers that ask.
  const sources: { readonly shunt: Shunt; readonly ikssKa: Float64Array }[] = []
  const shuntsAt = new Map<number, Shunt[]>()
  let sourceCount = 0
  for (const s of shunts) {
    const j = index[s.bus]!
    if (s.zOhm.max === null || j === -1) continue
    sourceCount++
    appendTo(shuntsAt, j, s)
  }
  if (sourceCount * n > MAX_SOURCE_SHARES) throw new StudyTooManySources(n, sourceCount, MAX_SOURCE_SHARES)
  // c · iBase / |Z_kk| per faulted bus: a source's share is then |Z_jk| / |z_s| times it.
  const ikssPerZ = new Float64Array(n)
  for (let k = 0; k < n; k++) {
    const kv = vn[studied[k]!]!
    ikssPerZ[k] = cFactors(kv, options).max / (SQRT3 * kv * Math.hypot(zMax[2 * k]!, zMax[2 * k + 1]!))
  }
  const column = new Float64Array(2 * n)
  for (const [j, here] of shuntsAt) {
    column.fill(0)
    column[2 * j] = 1
    solveBlocks(pattern, max.values, max.inverses, column)
    for (const s of here) {
      const zb = vn[s.bus]! ** 2
      const zs = Math.hypot(s.zOhm.max![0] / zb, s.zOhm.max![1] / zb)
      const ikssKa = new Float64Array(n)
      for (let k = 0; k < n; k++) ikssKa[k] = (Math.hypot(column[2 * k]!, column[2 * k + 1]!) / zs) * ikssPerZ[k]!
      sources.push({ shunt: s, ikssKa })
    }
  }
  const inUnit = unitFaults()
  for (let k = 0; k < busesListed; k++) {
    const b = studied[k]!
    const kv = vn[b]!
    const c = cFactors(kv, options)
    const iBase = 1 / (SQRT3 * kv) // kA per unit on 1 MVA
    const unit = inUnit.get(k)
    const [zr, zx] = unit?.max ?? [zMax[2 * k]!, zMax[2 * k + 1]!]
    // Between a unit's generator and transformer the source is c·UrG/√3 (IEC 60909-0 §6.7.1), not c·Un/√3.
    const source = unit?.voltageRatio ?? 1
    const ikssMaxKa = ((source * c.max) / Math.hypot(zr, zx)) * iBase
    const ikssMinKa = ((source * c.min) / Math.hypot(...(unit?.min ?? [zMin[2 * k]!, zMin[2 * k + 1]!]))) * iBase
    const isMeshed = meshed(b)
    const [fr, fx] = unit?.fc ?? (zFc === null ? [0, 1] : [zFc[2 * k]!, zFc[2 * k + 1]!])
    const [pr, px] = unit?.peak ?? (zPeak === null ? [zr, zx] : [zPeak[2 * k]!, zPeak[2 * k + 1]!])
    const rx = isMeshed ? (fr / fx) * (fc / options.fHz) : pr / px
    const kappa = 1.02 + 0.98 * Math.exp(-3 * rx)
    buses.push({
      busId: nameOf(b),
      nodeIds: nodesOnBus.get(b) ?? [],
      nominalVoltageKv: kv,
      ikssMaxKa,
      ikssMinKa,
      ikssTwoPhaseMaxKa: (SQRT3 / 2) * ikssMaxKa,
      ikssTwoPhaseMinKa: (SQRT3 / 2) * ikssMinKa,
      ikssEarthMaxKa: earthFault(b, c.max, zMax, k, z0Max),
      ikssEarthMinKa: earthFault(b, c.min, zMin, k, z0Min),
      ipKa: kappa * Math.SQRT2 * ikssMaxKa,
      kappa,
      kappaMethod: isMeshed ? 'C' : 'radial',
      xrRatio: zx / zr,
      skssMaxMva: SQRT3 * kv * ikssMaxKa,
      contributionCount: sources.length,
      contributions: [],
    })
  }
  const shuntOf = (i: number, caseName: Case): readonly [number, number] | null => {
    const here = shuntsOfNode.get(i)?.filter((s) => s.zOhm[caseName] !== null)
    if (here === undefined || here.length === 0) return null
    let [g, b] = [0, 0]
    for (const s of here) {
      const zb = vn[s.bus]! ** 2
      const [r, x] = [s.zOhm[caseName]![0] / zb, s.zOhm[caseName]![1] / zb]
      const d = r * r + x * x
      g += r / d
      b -= x / d
    }
    return [g, b]
  }
  const shuntsOfNode = new Map<number, Shunt[]>()
  for (const s of shunts) {
    if (s.zOhm.max === null || index[s.bus] === -1) continue
    const i = graph.indexOf.get(s.node.id)!
    appendTo(shuntsOfNode, i, s)
  }
  // The minimum case's branches, made once for every call (a coordination asks once per device).
  let minBranchOfEdge: Map<number, SequenceBranch> | undefined
  const currentsAlong = (path: SupplyPath, at: readonly number[], caseName: Case = 'max'): (number | null)[] => {
    const faultNode = graph.indexOf.get(path.nodeIds[0]!)!
    const kf = index[busOfNode(faultNode)]!
    if (kf === -1) return at.map(() => null)
    // Z column of the faulted bus (Z is symmetric), I_f = c/Z_ff, ΔV = −Z_·f·I_f.
    const zCol = new Float64Array(2 * n)
    zCol[2 * kf] = 1
    const factors = caseName === 'max' ? max : min
    solveBlocks(pattern, factors.values, factors.inverses, zCol)
    const c = cFactors(vn[studied[kf]!]!, options)[caseName]
    const [zr, zx] = [zCol[2 * kf]!, zCol[2 * kf + 1]!]
    const d = zr * zr + zx * zx
    const faultCurrent = [(c * zr) / d, (-c * zx) / d] as const
    return currentsIntoPath(
      {
        graph,
        busOf,
        busOfNode,
        vn,
        branchOfEdge: caseName === 'min' ? (minBranchOfEdge ??= new Map([...branchOfEdge].map(([e, br]) => [e, inCase(br, caseName)]))) : branchOfEdge,
        branchOfTransformer,
        shuntOf: (i) => shuntOf(i, caseName),
        faultNode,
        faultCurrent,
        dv: (b) => {
          const k = index[b]!
          if (k === -1) return null
          const [a, bb] = [zCol[2 * k]!, zCol[2 * k + 1]!]
          return [-(a * faultCurrent[0] - bb * faultCurrent[1]), -(a * faultCurrent[1] + bb * faultCurrent[0])]
        },
      },
      path,
      at,
    )
  }
  const whole = result()
  /**
   * Z_kk (max, min, and at fc where meshed) of each bus between a power station unit's generator and transformer, the
   * unit's generator corrected by its `inside` factor and its transformer uncorrected (one factorisation each).
   */
  function unitFaults() {
    type Z = readonly [number, number]
    const answers = new Map<number, { max: Z; min: Z; fc: Z | null; peak: Z; voltageRatio: number }>()
    for (const [g, { shunt, branch }] of unitElements) {
      const unit = units.ofGenerator.get(g)!
      const k = shunt === undefined ? -1 : index[shunt.bus]!
      if (shunt === undefined || branch === undefined || k === -1 || k >= busesListed) continue
      const z = shunt.zOhm.max!
      const scale = unit.inside / unit.value
      const peak = shunt.peak!
      const inner: Shunt = {
        ...shunt,
        zOhm: { max: [z[0] * scale, z[1] * scale], min: [z[0] * scale, z[1] * scale] },
        peak: [peak[0] * scale, peak[1] * scale],
      }
      const plain = { ...branch, r: branch.r / unit.value, x: branch.x / unit.value }
      const series = branches.map((br) => (br === branch ? plain : br))
      const toEarth = shunts.map((s) => (s === shunt ? inner : s))
      const at = (caseName: Case, xScale: number, list: readonly SequenceShunt[] = toEarth): readonly [number, number] => {
        const f = factor(pattern, index, series, list, caseName, xScale)
        const column = new Float64Array(2 * n)
        column[2 * k] = 1
        solveBlocks(pattern, f.values, f.inverses, column)
        return [column[2 * k]!, column[2 * k + 1]!]
      }
      const max = at('max', 1)
      const isMeshed = meshed(studied[k]!)
      answers.set(k, {
        max,
        min: at('min', 1),
        fc: isMeshed ? at('max', fc / options.fHz, forPeak(toEarth)) : null,
        peak: isMeshed ? max : at('max', 1, forPeak(toEarth)),
        voltageRatio: (shunt.node.study?.ratedVoltageKv as number) / vn[shunt.bus]!,
      })
    }
    return answers
  }
  const contribution = (source: (typeof sources)[number], k: number): SourceContribution => ({
    sourceId: source.shunt.node.id,
    sourceType: source.shunt.kind,
    ikssKa: source.ikssKa[k]!,
  })
  const contributionsAt = (k: number, limit: number): SourceContribution[] => {
    if (limit >= sources.length) return sources.map((source) => contribution(source, k)).sort((p, q) => q.ikssKa - p.ikssKa)
    // The `limit` largest by insertion into a short sorted list, one object per listed source.
    const top: number[] = []
    for (let s = 0; s < sources.length; s++) {
      const value = sources[s]!.ikssKa[k]!
      if (top.length === limit && value <= sources[top[limit - 1]!]!.ikssKa[k]!) continue
      let at = top.length
      while (at > 0 && sources[top[at - 1]!]!.ikssKa[k]! < value) at--
      top.splice(at, 0, s)
      if (top.length > limit) top.pop()
    }
    return top.map((s) => contribution(sources[s]!, k))
  }
  // The whole-network answers without all contributions are kept with the solution (per network version); one with
  // all of them (buses × sources objects: ~94 MB for 5 000 buses and 200 motors) and a one-bus answer are cut each time,
  // so the graph cache's 32 networks never hold such answers.
  const views = new Map<string, ShortCircuitResult>([['none', whole]])
  const view = ({ contributions, busId }: ContributionsView): ShortCircuitResult => {
    const kept = busId === undefined ? views.get(contributions) : undefined
    if (kept !== undefined) return kept
    const limit = contributions === 'all' ? sources.length : contributions === 'largest' ? LARGEST_CONTRIBUTIONS : 0
    if (busId === undefined && limit * whole.buses.length > MAX_LISTED_CONTRIBUTIONS) {
      throw new TooManyContributions(whole.buses.length, sources.length, MAX_LISTED_CONTRIBUTIONS)
    }
    const node = busId === undefined ? undefined : graph.indexOf.get(busId)
    const only = busId === undefined ? -1 : node !== undefined ? index[busOfNode(node)]! : whole.buses.findIndex((b) => b.busId === busId)
    const keep = (k: number) => busId === undefined || k === only
    const answer = {
      ...whole,
      buses: whole.buses.flatMap((b, k) => (keep(k) ? [limit === 0 ? b : { ...b, contributions: contributionsAt(k, limit) }] : [])),
    }
    if (busId === undefined && contributions !== 'all') views.set(contributions, answer)
    return answer
  }
  return { result: whole, view, currentsAlong }

  /**
   * Power station units (IEC 60909-0 §6.7): each generator naming its unit transformer (`unitTransformerId`), with
   * the factor that replaces KG and KT for faults outside the unit, KS (eq. 21, on-load tap changer) or KSO (eq. 23),
   * and `inside`, the generator's for a fault on the bus between the two: cmax/(1 + x″d·sin φrG), divided by 1 + pG
   * without an on-load tap changer, the transformer then uncorrected (as pandapower does). Missing generator or
   * transformer data is reported where those nodes are read.
   */
  function powerStationUnits() {
    const ofGenerator = new Map<number, UnitCorrection>()
    const ofTransformer = new Map<number, UnitCorrection>()
    const value = (node: ElectricalNode, parameter: string) => {
      const v = node.study?.[parameter]
      return typeof v === 'number' ? v : Number.NaN
    }
    for (let g = 0; g < nodes.length; g++) {
      const node = nodes[g]!
      const id = node.study?.unitTransformerId
      if (node.nodeType !== Generator || typeof id !== 'string') continue
      const t = graph.indexOf.get(id)
      const sides = t === undefined || nodes[t]!.nodeType !== PowerTransformer || !isPair(t) ? [] : [busOfTerm(termBase[t]!), busOfTerm(termBase[t]! + 1)]
      const lv = busOfNode(g)
      if (t === undefined || !sides.includes(lv) || ofTransformer.has(t)) {
        need(
          node,
          'unitTransformerId',
          `${id} is not a two-winding transformer with one side on this generator's bus and no other generator's unit transformer`,
        )
        continue
      }
      const transformer = nodes[t]!
      const tap = transformer.study?.tapChanger
      if (typeof tap !== 'string') {
        need(transformer, 'tapChanger', `the unit transformer of ${node.id}: whether it has an on-load tap changer (KS) or not (KSO)`)
        continue
      }
      const hv = sides.find((b) => b !== lv) ?? lv
      const [hvKv, lvKv] = [value(transformer, 'hvRatedVoltageKv'), value(transformer, 'lvRatedVoltageKv')]
      const uk = value(transformer, 'ukPercent') / 100
      const ur = typeof transformer.study?.urPercent === 'number' ? transformer.study.urPercent / 100 : uk / Math.sqrt(1 + value(transformer, 'xrRatio') ** 2)
      const xT = Math.sqrt(Math.max(uk * uk - ur * ur, 0))
      const [urG, xd, cosPhi] = [value(node, 'ratedVoltageKv'), value(node, 'xdSubtransientPercent') / 100, value(node, 'powerFactor')]
      const sinPhi = Math.sqrt(Math.max(1 - cosPhi * cosPhi, 0))
      const pG = voltageRange(node)
      const cmax = cFactors(kvOf(lv), options).max
      const unQ = kvOf(hv)
      const offLoad = transformer.study?.offLoadTapPercent
      const pT = typeof offLoad === 'number' ? offLoad / 100 : 0
      const unit: UnitCorrection =
        tap === 'onLoad'
          ? {
              generator: g,
              factor: 'KS',
              value: ((unQ * unQ) / (urG * urG)) * ((lvKv * lvKv) / (hvKv * hvKv)) * (cmax / (1 + Math.abs(xd - xT) * sinPhi)),
              inside: cmax / (1 + xd * sinPhi),
            }
          : {
              generator: g,
              factor: 'KSO',
              value: (unQ / (urG * (1 + pG))) * (lvKv / hvKv) * (1 - pT) * (cmax / (1 + xd * sinPhi)),
              inside: cmax / ((1 + pG) * (1 + xd * sinPhi)),
            }
      ofGenerator.set(g, unit)
      ofTransformer.set(t, unit)
      notModelled.push({
        nodeId: node.id,
        reason:
          'power station unit: at the bus between generator and unit transformer, I″k, ip and κ are solved with the unit corrected for a fault there; ' +
          'the sources’ contributions, the per-device currents and I″k1 there are those of the network corrected for faults outside the unit (KS/KSO)',
      })
    }
    return { ofGenerator, ofTransformer }
  }

  /**
   * A three-winding transformer (IEC 60909-0 §6.3.2, eq. 10): the impedances of its three pairs of windings, each
   * ukr·UrTHV²/SrT of the pair's smaller rated power, corrected by its own KT = 0.95·cmax/(1 + 0.6·xT) (§6.3.3, cmax
   * of the LV side), make a star ZA = ½(ZAB + ZAC − ZBC), ZB = ½(ZBC + ZAB − ZAC), ZC = ½(ZAC + ZBC − ZAB) referred to
   * the HV side: three branches from a star-point bus at the HV side's nominal voltage, the MV and LV ones through their
   * rated ratios. Which connection is which winding: `hvNodeId`, `mvNodeId`, `lvNodeId` name the neighbours.
   */
  function threeWinding(i: number, node: ElectricalNode) {
    const why = 'three-winding transformer impedance'
    const p = (parameter: string) => num(node, parameter, why)
    const kv = { hv: p('hvRatedVoltageKv'), mv: p('mvRatedVoltageKv'), lv: p('lvRatedVoltageKv') }
    const sMva = { hv: p('hvRatedPowerKva') / 1000, mv: p('mvRatedPowerKva') / 1000, lv: p('lvRatedPowerKva') / 1000 }
    const pair = (name: 'HvMv' | 'HvLv' | 'MvLv', s: number) => ({ uk: p(`uk${name}Percent`) / 100, ur: p(`ur${name}Percent`) / 100, s })
    const pairs = [pair('HvMv', Math.min(sMva.hv, sMva.mv)), pair('HvLv', Math.min(sMva.hv, sMva.lv)), pair('MvLv', Math.min(sMva.mv, sMva.lv))]
    const windings = windingBuses(i, need)
    if (windings === null) return
    const [hv, mv, lv] = windings
    const star = starOf.get(i)!
    parts.union(hv, mv)
    parts.union(hv, lv)
    parts.union(hv, star)
    if (vn[hv] == null || vn[mv] == null || vn[lv] == null) return
    vn[star] = vn[hv]
    const cmax = cFactors(kvOf(lv), options).max
    const names = ['KTAB', 'KTAC', 'KTBC'] as const
    const [ab, ac, bc] = pairs.map(({ uk, ur, s }, k) => {
      const zBase = (kv.hv * kv.hv) / s
      const x = Math.sqrt(Math.max(uk * uk - ur * ur, 0))
      const kt = (0.95 * cmax) / (1 + 0.6 * x)
      correction.push({ nodeId: node.id, factor: names[k]!, value: kt })
      return { r: kt * ur * zBase, x: kt * x * zBase }
    }) as [{ r: number; x: number }, { r: number; x: number }, { r: number; x: number }]
    const [a, b, c] = starEquivalent(ab, ac, bc)
    const arms = [
      { from: star, to: hv, ...a, t: 1 },
      { from: mv, to: star, ...b, t: kv.mv / kv.hv / (kvOf(mv) / kvOf(hv)) },
      { from: lv, to: star, ...c, t: kv.lv / kv.hv / (kvOf(lv) / kvOf(hv)) },
    ]
    branches.push(...arms)
    branchOfTransformer.set(i, arms)
    const group = node.study?.vectorGroup
    if (typeof group !== 'string') zero.need(node, 'vectorGroup', 'which windings pass zero sequence and which are earthed', [hv, mv, lv])
    else if (/n/i.test(group)) {
      zero.need(node, 'vectorGroup', `three-winding transformers with an earthed star point (${group}) are not modelled in the zero sequence`, [hv, mv, lv])
    }
  }

  function result(): ShortCircuitResult {
    return {
      faultTypes: buses.some((b) => b.ikssEarthMaxKa !== null) ? ['threePhase', 'twoPhase', 'singlePhaseToEarth'] : ['threePhase', 'twoPhase'],
      method:
        'IEC 60909-0:2016 equivalent voltage source at the fault location, KT and KG impedance correction factors; ' +
        'line-to-line and line-to-earth faults with the negative-sequence impedance equal to the positive one',
      assumed: {
        lvTolerancePercent: options.lvTolerancePercent,
        fHz: options.fHz,
        cFactors: { lv: cFactors(0.4, options), mvHv: cFactors(10, options) },
        correctionFactors: correction,
        notModelled,
        conductorTemperatureC: 20,
        minCaseConductorTemperatureC: endTemperatureC,
        cablesFromSize,
      },
      buses,
      unsuppliedBusIds,
      earthFaults: {
        incompleteBusIds: earth.incomplete.map(nameOf),
        missing: earth.missing.slice(0, MAX_MISSING_LISTED),
        missingCount: earth.missing.length,
        unearthedBusIds: earth.unearthed.map(nameOf),
      },
    }
  }
}
