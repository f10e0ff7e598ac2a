import { EdgeType, NodeType } from '../codes.ts'
import { StudyDataMissing } from '../errors.ts'
import { UnionFind } from '../pandapower.ts'
import type { Graph } from '../topology.ts'
import type { LoadFlowBranch, LoadFlowBus, LoadFlowCase } from './load-flow-case.ts'
import { starEquivalent, studyBuses, studyParameters, type CableFromSizeUsed } from './study-buses.ts'

/**
 * The stored network as the load flow's bus/branch model (load-flow-case.ts), per unit on BASE_MVA and each bus's
 * nominal voltage. Buses are the short-circuit study's: the export's buses (pandapower.ts `buildBuses`) with closed
 * switching devices and bus ties joining theirs. Nothing the load flow needs is defaulted, except the voltage
 * set-points (1.0 pu where `voltageSetpointPu` is not given, listed in `sources`):
 * - UtilitySupply: the slack (|V| = voltageSetpointPu, angle 0), an ideal source: its short-circuit impedance is a
 *   short-circuit parameter, not a load-flow one (as pandapower's ext_grid). Two supplies in one part are two slacks.
 * - Generator: PV (P = activePowerKw, |V| = voltageSetpointPu), reactive limits not enforced; the first generator of a
 *   part with no utility supply is that part's slack, and one on a slack's bus is part of that slack (P not read).
 * - Motor: PQ drawing P = ratedPowerKw / efficiency, Q = P·tan φ (powerFactor); FeederLoad: P = activePowerKw, Q = P·tan φ.
 * - CapacitorBank: a shunt of ratedPowerKw kvar at its ratedVoltageV (at the bus's nominal voltage without one).
 * - Cable / OverheadLine: series R + jX = cableLengthM × (rOhmPerKm + j·xOhmPerKm) of the fed node (or the cable table's
 *   values for its cableSize), no charging; rated by the fed node's ampacityA where given.
 * - PowerTransformer: series ZT = ukr·UrLV²/SrT, RT = uRr·UrLV²/SrT (or from X/R), at the rated ratio (off-nominal
 *   against the buses' nominal voltages, on the HV side); no magnetising branch, no phase shift, no tap changer.
 * - Three-winding PowerTransformer (three connections): the star equivalent of its pairs' impedances (the short-circuit
 *   study's, without KT), three branches `<id>/hv`, `<id>/mv`, `<id>/lv` from a star-point bus `<id>/star` at the HV
 *   side's nominal voltage, each at its winding's rated ratio and rated by its winding's power.
 * - UpsBattery: idle (not modelled). Parts with no utility supply or generator are not solved (`unsuppliedBusIds`).
 */

export const BASE_MVA = 1

export interface SourceSetpoint {
  readonly nodeId: string
  readonly busKind: 'slack' | 'pv'
  readonly voltageSetpointPu: number
  /** false: voltageSetpointPu was not given and 1.0 pu was assumed. */
  readonly setpointGiven: boolean
}

export interface MappedBus {
  readonly busId: string
  readonly nodeIds: string[]
  readonly nominalVoltageKv: number
}

export interface MappedBranch {
  readonly branchId: string
  readonly kind: 'Cable' | 'OverheadLine' | 'PowerTransformer'
  /** The fed node of a cable or line, the transformer itself. */
  readonly nodeId: string
  readonly ampacityA?: number
  readonly transformer?: { readonly ratedPowerKva: number; readonly hvRatedVoltageKv: number; readonly lvRatedVoltageKv: number }
}

export interface LoadFlowNetwork {
  /** Index-aligned: `study.buses[k]` is `buses[k]`, `study.branches[k]` is `branches[k]`. */
  readonly study: LoadFlowCase
  readonly buses: MappedBus[]
  readonly branches: MappedBranch[]
  readonly assumed: {
    readonly sources: SourceSetpoint[]
    readonly cablesFromSize: CableFromSizeUsed[]
    readonly notModelled: { readonly nodeId: string; readonly reason: string }[]
  }
  readonly unsuppliedBusIds: string[]
}

const { UtilitySupply, Generator, PowerTransformer, Motor, FeederLoad, CapacitorBank, UpsBattery, VariableSpeedDrive } = NodeType

/** The model of `graph`; 422 (`StudyDataMissing`) naming every node and parameter of a supplied part it lacks. */
export function loadFlowNetwork(graph: Graph): LoadFlowNetwork {
  const { nodes, edges, edgeSource, edgeTarget, adjStart } = graph
  const { missing, need, num, cablesFromSize, cableOhms } = studyParameters()
  const notModelled: { nodeId: string; reason: string }[] = []
  const model = studyBuses(graph)
  const { termBase, isPair, isTriple, conflicts, busOf, busOfTerm, busOfNode, nodesOnBus } = model
  // Three-winding transformers' star points: buses after the network's (as in the short-circuit study).
  const starOf = new Map<number, number>()
  for (let i = 0; i < nodes.length; i++) if (isTriple(i)) starOf.set(i, model.busCount + starOf.size)
  const starName = new Map([...starOf].map(([i, b]) => [b, `${nodes[i]!.id}/star`]))
  const busCount = model.busCount + starOf.size
  const vn: (number | null)[] = [...model.vn, ...new Array<null>(starOf.size).fill(null)]
  const bus = (b: number) => (b < model.busCount ? model.bus(b) : b)
  const nameOf = (b: number) => starName.get(b) ?? model.nameOf(b)

  interface Series {
    readonly from: number
    readonly to: number
    readonly rOhm: number
    readonly xOhm: number
    /** Off-nominal ratio on the `from` side (1 for a line). */
    readonly tapRatio: number
    readonly mapped: MappedBranch
  }
  const series: Series[] = []
  const parts = new UnionFind(busCount)
  for (let e = 0; e < edges.length; e++) {
    const type = edges[e]!.edgeType
    if (type !== EdgeType.Cable && type !== EdgeType.OverheadLine) continue
    const from = busOf(edgeSource[e]!, e)
    const to = busOf(edgeTarget[e]!, e)
    if (from === to) continue
    const fed = nodes[edgeTarget[e]!]!
    const { rOhm, xOhm } = cableOhms(fed, type)
    const ampacityA = fed.study?.ampacityA
    parts.union(from, to)
    series.push({
      from,
      to,
      rOhm,
      xOhm,
      tapRatio: 1,
      mapped: {
        branchId: `${graph.nodes[edgeSource[e]!]!.id}>${fed.id}`,
        kind: type === EdgeType.Cable ? 'Cable' : 'OverheadLine',
        nodeId: fed.id,
        ...(typeof ampacityA === 'number' ? { ampacityA } : {}),
      },
    })
  }

  // Injections per bus, MW and Mvar; sources in node order.
  const pLoad = new Float64Array(busCount)
  const qLoad = new Float64Array(busCount)
  const pGen = new Float64Array(busCount)
  const bShunt = new Float64Array(busCount)
  const supplies: number[] = []
  const generators: number[] = []
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]!
    const at = busOfNode(i)
    const tanPhi = (why: string) => Math.tan(Math.acos(num(node, 'powerFactor', why)))
    switch (node.nodeType) {
      case PowerTransformer: {
        if (isTriple(i)) {
          threeWinding(i)
          break
        }
        if (!isPair(i)) {
          missing.push({
            nodeId: node.id,
            parameter: 'edges',
            reason: `a transformer needs two connections (three for a three-winding one), it has ${adjStart[i + 1]! - adjStart[i]!}`,
          })
          break
        }
        const a = busOfTerm(termBase[i]!)
        const b = busOfTerm(termBase[i]! + 1)
        const why = 'transformer impedance and rating'
        const kva = num(node, 'ratedPowerKva', why)
        const hvKv = num(node, 'hvRatedVoltageKv', why)
        const lvKv = num(node, 'lvRatedVoltageKv', why)
        const uk = num(node, 'ukPercent', why)
        const ur = node.study?.urPercent
        const xr = node.study?.xrRatio
        if (typeof ur !== 'number' && typeof xr !== 'number') missing.push({ nodeId: node.id, parameter: 'urPercent', reason: `${why} (or xrRatio)` })
        parts.union(a, b)
        if (vn[a] == null || vn[b] == null || a === b) break
        // The HV side is the bus whose nominal voltage is nearer the HV rating (as the short-circuit study decides it).
        const aIsHv = Math.abs(Math.log(vn[a] / hvKv)) + Math.abs(Math.log(vn[b] / lvKv)) <= Math.abs(Math.log(vn[b] / hvKv)) + Math.abs(Math.log(vn[a] / lvKv))
        const [hv, lv] = aIsHv ? [a, b] : [b, a]
        const zBase = (lvKv * lvKv) / (kva / 1000)
        const zT = (uk / 100) * zBase
        const rT = typeof ur === 'number' ? (ur / 100) * zBase : zT / Math.sqrt(1 + (xr as number) ** 2)
        series.push({
          from: hv,
          to: lv,
          rOhm: rT,
          xOhm: Math.sqrt(Math.max(zT * zT - rT * rT, 0)),
          tapRatio: hvKv / lvKv / (vn[hv]! / vn[lv]!),
          mapped: {
            branchId: node.id,
            kind: 'PowerTransformer',
            nodeId: node.id,
            transformer: { ratedPowerKva: kva, hvRatedVoltageKv: hvKv, lvRatedVoltageKv: lvKv },
          },
        })
        break
      }
      case UtilitySupply:
        supplies.push(i)
        break
      case Generator:
        generators.push(i)
        break
      case Motor: {
        const why = 'motor demand'
        const pMw = num(node, 'ratedPowerKw', why) / 1000 / (num(node, 'efficiencyPercent', why) / 100)
        pLoad[at] = pLoad[at]! + pMw
        qLoad[at] = qLoad[at]! + pMw * tanPhi(why)
        break
      }
      case FeederLoad: {
        const why = 'load demand'
        const pMw = num(node, 'activePowerKw', why) / 1000
        pLoad[at] = pLoad[at]! + pMw
        qLoad[at] = qLoad[at]! + pMw * tanPhi(why)
        break
      }
      case CapacitorBank: {
        const kvar = node.ratedPowerKw
        if (typeof kvar !== 'number' || !(kvar > 0)) {
          missing.push({ nodeId: node.id, parameter: 'ratedPowerKw', reason: 'capacitor bank rating in kvar' })
          break
        }
        const ratedKv = typeof node.ratedVoltageV === 'number' && node.ratedVoltageV > 0 ? node.ratedVoltageV / 1000 : null
        const kv = vn[at]
        const scale = ratedKv === null || kv == null ? 1 : (kv / ratedKv) ** 2
        bShunt[at] = bShunt[at]! + (kvar / 1000) * scale
        break
      }
      case UpsBattery:
        notModelled.push({ nodeId: node.id, reason: 'UPS / battery: assumed idle (no power exchanged)' })
        break
      case VariableSpeedDrive:
        notModelled.push({ nodeId: node.id, reason: 'variable-speed drive: a bus, its converter losses not modelled' })
        break
    }
  }

  // Slack and PV buses.
  const kind = new Array<'slack' | 'pv' | 'pq'>(busCount).fill('pq')
  const vSet = new Float64Array(busCount)
  const sources: SourceSetpoint[] = []
  const setpoint = (i: number) => {
    const value = nodes[i]!.study?.voltageSetpointPu
    return typeof value === 'number' ? { voltageSetpointPu: value, setpointGiven: true } : { voltageSetpointPu: 1, setpointGiven: false }
  }
  const slackParts = new Set<number>()
  const holdSlack = (i: number) => {
    const at = busOfNode(i)
    slackParts.add(parts.find(at))
    const set = setpoint(i)
    if (kind[at] !== 'slack') [kind[at], vSet[at]] = ['slack', set.voltageSetpointPu]
    sources.push({ nodeId: nodes[i]!.id, busKind: 'slack', ...set })
  }
  for (const i of supplies) holdSlack(i)
  for (const i of generators) {
    const at = busOfNode(i)
    if (!slackParts.has(parts.find(at))) {
      holdSlack(i)
      continue
    }
    if (kind[at] === 'slack') {
      sources.push({ nodeId: nodes[i]!.id, busKind: 'slack', voltageSetpointPu: vSet[at]!, setpointGiven: setpoint(i).setpointGiven })
      continue
    }
    const set = setpoint(i)
    if (kind[at] !== 'pv') [kind[at], vSet[at]] = ['pv', set.voltageSetpointPu]
    pGen[at] = pGen[at]! + num(nodes[i]!, 'activePowerKw', 'generator output (a PV bus)') / 1000
    sources.push({ nodeId: nodes[i]!.id, busKind: 'pv', ...set })
  }

  const index = new Int32Array(busCount).fill(-1)
  const studied: number[] = []
  const unsuppliedBusIds: string[] = []
  for (let b = 0; b < busCount; b++) {
    if (bus(b) !== b) continue
    if (slackParts.has(parts.find(b))) index[b] = studied.push(b) - 1
    else unsuppliedBusIds.push(nameOf(b))
  }
  for (const b of studied) if (vn[b] == null) missing.push({ nodeId: nameOf(b), parameter: 'ratedVoltageV', reason: 'the nominal voltage of the bus' })
  const relevant = missing.filter((m) => {
    const i = graph.indexOf.get(m.nodeId)
    return i === undefined || index[busOfNode(i)] !== -1
  })
  if (relevant.length > 0) throw new StudyDataMissing('load flow', relevant)
  if (conflicts.length > 0)
    notModelled.push(...conflicts.map((nodeId) => ({ nodeId, reason: 'ratedVoltageV differs from another node on its bus; the first was used' })))

  const buses = studied.map((b): LoadFlowBus => {
    const bus: LoadFlowBus = { id: nameOf(b), kind: kind[b]!, pLoadMw: pLoad[b]!, qLoadMvar: qLoad[b]!, pGenMw: pGen[b]!, bShuntMvar: bShunt[b]! }
    return kind[b] === 'pq' ? bus : { ...bus, vSetPu: vSet[b]! }
  })
  const kept = series.filter((s) => index[s.from] !== -1)
  const branches = kept.map(({ from, to, rOhm, xOhm, tapRatio, mapped }): LoadFlowBranch => {
    const zBaseOhm = vn[to]! ** 2 / BASE_MVA
    return { id: mapped.branchId, fromBusId: nameOf(from), toBusId: nameOf(to), rPu: rOhm / zBaseOhm, xPu: xOhm / zBaseOhm, tapRatio }
  })
  return {
    study: { baseMva: BASE_MVA, buses, branches },
    buses: studied.map((b) => ({ busId: nameOf(b), nodeIds: nodesOnBus.get(b) ?? [], nominalVoltageKv: vn[b]! })),
    branches: kept.map((s) => s.mapped),
    assumed: { sources, cablesFromSize, notModelled },
    unsuppliedBusIds,
  }

  /** A three-winding transformer's star equivalent (no KT: that is the short circuit's), its arms from the star point. */
  function threeWinding(i: number) {
    const node = nodes[i]!
    const why = 'three-winding transformer impedance and rating'
    const p = (parameter: string) => num(node, parameter, why)
    const buses = model.windingBuses(i, need)
    const windings = (['hv', 'mv', 'lv'] as const).map((w, k) => ({ w, kv: p(`${w}RatedVoltageKv`), kva: p(`${w}RatedPowerKva`), bus: buses?.[k] ?? -1 }))
    const [hv, mv, lv] = windings as [(typeof windings)[0], (typeof windings)[0], (typeof windings)[0]]
    const pair = (name: string, kva: number) => {
      const zBase = (hv.kv * hv.kv) / (kva / 1000)
      const [uk, ur] = [p(`uk${name}Percent`) / 100, p(`ur${name}Percent`) / 100]
      return { r: ur * zBase, x: Math.sqrt(Math.max(uk * uk - ur * ur, 0)) * zBase }
    }
    const ab = pair('HvMv', Math.min(hv.kva, mv.kva))
    const ac = pair('HvLv', Math.min(hv.kva, lv.kva))
    const bc = pair('MvLv', Math.min(mv.kva, lv.kva))
    if (windings.some((w) => w.bus === -1)) return
    const star = starOf.get(i)!
    for (const w of windings) parts.union(star, w.bus)
    if (windings.some((w) => vn[w.bus] == null)) return
    vn[star] = vn[hv.bus]!
    const arms = starEquivalent(ab, ac, bc)
    windings.forEach((winding, k) => {
      // The arm's impedance referred to the HV side, moved to its winding's side: ·(UrW/UrHV)².
      const toWinding = (winding.kv / hv.kv) ** 2
      series.push({
        from: star,
        to: winding.bus,
        rOhm: arms[k]!.r * toWinding,
        xOhm: arms[k]!.x * toWinding,
        tapRatio: hv.kv / winding.kv / (vn[star]! / vn[winding.bus]!),
        mapped: {
          branchId: `${node.id}/${winding.w}`,
          kind: 'PowerTransformer',
          nodeId: node.id,
          transformer: { ratedPowerKva: winding.kva, hvRatedVoltageKv: hv.kv, lvRatedVoltageKv: winding.kv },
        },
      })
    })
  }
}
