import type { DatabaseHandle } from '../../../db/connect.ts'
import type { OrgId } from '../../../ids.ts'
import type { SitesService } from '../../sites/service.ts'
import {
  curveRangeEmpty,
  NoFaultLevel,
  NodeNotSupplied,
  NoProtectionSettings,
  StudyDataMissing,
  StudyNotSolvable,
  StudyTooLarge,
  StudyTooManySources,
  StudyTooMeshed,
  TooManyStudiedDevices,
  type MissingStudyData,
} from '../errors.ts'
import { toPandapowerNet } from '../pandapower.ts'
import {
  checkCoordination,
  CURVES,
  devicesFromNodes,
  devicesOnSupplyPath,
  faultLevelsAlong,
  logSpacedCurrents,
  MAX_STUDIED_DEVICES,
  minimumFaultChecks,
  faultIndexAlong,
  pathCurrentRatios,
  resolveCurve,
  sampleCurve,
  tripTime,
  type CurveId,
  type FaultLevel,
} from '../protection.ts'
import { compareEdges, compareIds, toGraphEdge, toGraphNode } from '../rows.ts'
import type { CoordinationQueryInput, PandapowerQueryInput, ProtectionCurvesQueryInput, ShortCircuitQueryInput, TripTimeQueryInput } from '../schemas.ts'
import { loadFlowStudy, type LoadFlowStudy } from '../studies/load-flow-study.ts'
import { shortCircuitSolve, type ShortCircuitSolution } from '../studies/short-circuit.ts'
import { edgeTriples, engineeringNodes, topologyNodes } from '../store.ts'
import type { GraphCache } from './graph-cache.ts'
import {
  buildGraph,
  findIslands,
  findIsolatedNodes,
  findLoops,
  findSupplyPath,
  findSupplyPaths,
  NodeNotInNetwork,
  type ElectricalNode,
  type Graph,
  type SupplyPath,
} from '../topology.ts'

export interface AnalysisDeps {
  handle: DatabaseHandle
  sites: SitesService
}

/** The curve formula with its constants, as a protection engineer would check it by hand. */
/** Short-circuit solutions kept per network version, by options (the oldest goes first). */
const STUDIES_PER_NETWORK = 4

export function curveFormula(id: CurveId): string {
  const spec = CURVES[id]
  if (spec.kind === 'iec') return `t = TMS × ${spec.k} / ((I/Is)^${spec.alpha} − 1)  [IEC 60255-151 ${spec.label}]`
  if (spec.kind === 'ieee') return `t = TD × (${spec.a} / ((I/Is)^${spec.p} − 1) + ${spec.b})  [IEEE C37.112 ${spec.label}]`
  return 't = TMS seconds when I > Is  [Definite Time]'
}

/** The refusals of a short-circuit study a typed `faultCurrentA` goes on without (no minimum-fault check then). */
const STUDY_REFUSALS = [StudyDataMissing, StudyTooLarge, StudyNotSolvable, StudyTooMeshed, StudyTooManySources, TooManyStudiedDevices]
const isStudyRefusal = (error: unknown): error is InstanceType<(typeof STUDY_REFUSALS)[number]> => STUDY_REFUSALS.some((refusal) => error instanceof refusal)

export function createAnalysisService(deps: AnalysisDeps, graphs: GraphCache) {
  const { sites } = deps
  const db = deps.handle.db
  // Study results hang on the graph they were computed from: the graph cache drops a site's graph on every write
  // of its network (graph-cache.ts), so a result never outlives the network version it describes.
  const studies = new WeakMap<Graph, Map<string, ShortCircuitSolution>>()
  const loadFlows = new WeakMap<Graph, LoadFlowStudy>()

  /**
   * The site's stored network as a graph: nodes by id, edges by (source, target, type), code-unit order.
   * `lean` reads only ids and types (topology); otherwise ratings and protection settings come too. Served from
   * the graph cache while no write touched the site's network (graph-cache.ts).
   */
  async function loadGraph(orgId: OrgId, siteCode: string, lean = false): Promise<Graph> {
    const site = await sites.require(orgId, siteCode)
    // The site's creation time in the key: a site deleted (its network cascades) and created again under the same
    // code never meets the graph of its predecessor, though deleting a site does not pass through this module.
    return graphs.get(orgId, siteCode, `${lean ? 'lean' : 'full'}@${site.createdAt}`, () => readGraph(orgId, siteCode, lean))
  }

  async function readGraph(orgId: OrgId, siteCode: string, lean: boolean): Promise<Graph> {
    const nodes: ElectricalNode[] = lean
      ? (await topologyNodes(db, orgId, siteCode)).map((r) => ({ id: r.id, nodeType: r.node_type }))
      : (await engineeringNodes(db, orgId, siteCode)).map(toGraphNode)
    const edgeRows = await edgeTriples(db, orgId, siteCode)
    nodes.sort((a, b) => compareIds(a.id, b.id))
    edgeRows.sort(compareEdges)
    return buildGraph(nodes, edgeRows.map(toGraphEdge))
  }

  function nodeOf(graph: Graph, nodeId: string) {
    const index = graph.indexOf.get(nodeId)
    if (index === undefined) throw new NodeNotInNetwork(nodeId)
    return graph.nodes[index]!
  }

  /**
   * The path from the node to a supply (the nearest unless `supplyId` names one), the one `supply-paths` lists for it,
   * built alone; 422 when there is none.
   */
  function supplyPathOf(graph: Graph, nodeId: string, supplyId: string | undefined) {
    const path = findSupplyPath(graph, nodeId, supplyId)
    if (!path) throw new NodeNotSupplied(nodeId, supplyId)
    return path
  }

  /** Each device's index on the path (fault end first), by one map of the path's node ids: linear in the path. */
  function indexesOn(path: SupplyPath, devices: readonly { id: string }[]): number[] {
    const at = new Map<string, number>()
    path.nodeIds.forEach((id, k) => at.set(id, k))
    return devices.map((d) => at.get(d.id) ?? -1)
  }

  function shortCircuitOf(graph: Graph, query: ShortCircuitQueryInput): ShortCircuitSolution {
    const options = {
      lvTolerancePercent: query.lvTolerancePercent === 6 ? 6 : 10,
      fHz: query.fHz === 60 ? 60 : 50,
      conductorEndTemperatureC: query.conductorEndTemperatureC ?? 20,
    } as const
    const key = `${options.lvTolerancePercent}/${options.fHz}/${options.conductorEndTemperatureC}`
    let results = studies.get(graph)
    if (results === undefined) studies.set(graph, (results = new Map()))
    let result = results.get(key)
    if (result === undefined) {
      // The options are the caller's (an end temperature is any number from 20 to 250): a few kept per network version.
      if (results.size >= STUDIES_PER_NETWORK) results.delete(results.keys().next().value!)
      results.set(key, (result = shortCircuitSolve(graph, options)))
    }
    return result
  }

  /**
   * The fault at the path's first node: the typed current, else the short-circuit study's I″k max there (the study run
   * with the query's `lvTolerancePercent`; 422 when it lacks data: `StudyDataMissing` naming each node and parameter,
   * kept per network version like the study's own route); the current ratio of every node up to
   * `through` (422 naming a transformer rating the referral lacks, typed or not); and the study's fault levels along
   * the path for the minimum-fault checks (none, with the reason, when a typed current stands and the study cannot run).
   * `deviceRatios`: for each path index of `devices`, the share of the fault current the node carries: from the study,
   * its branch current over I″k (a motor on the fault's side of it feeds the fault past it), else its `ratios` entry.
   */
  function faultAlong(
    graph: Graph,
    path: SupplyPath,
    devices: readonly number[],
    query: { faultCurrentA?: number; lvTolerancePercent?: number; conductorEndTemperatureC?: number },
  ) {
    let through = 0
    for (const k of devices) if (k > through) through = k
    const typedA = query.faultCurrentA
    const { ratios, missing } = pathCurrentRatios(graph, path, through)
    if (missing.length > 0) throw new StudyDataMissing('referral of the fault current through transformers', missing)
    let solution: ShortCircuitSolution | null = null
    let minimumFaultCheck: { checked: boolean; detail: string | null; missing: MissingStudyData[] } = { checked: true, detail: null, missing: [] }
    try {
      // Each device's current and zone-end check costs a walk of the network and a solve: bounded before the study.
      if (devices.length > MAX_STUDIED_DEVICES) throw new TooManyStudiedDevices(devices.length, MAX_STUDIED_DEVICES)
      solution = shortCircuitOf(graph, { lvTolerancePercent: query.lvTolerancePercent, conductorEndTemperatureC: query.conductorEndTemperatureC })
    } catch (error) {
      if (typedA === undefined || !isStudyRefusal(error)) throw error
      const extensions = error.extensions as { missing?: MissingStudyData[] }
      minimumFaultCheck = { checked: false, detail: error.message, missing: extensions.missing ?? [] }
    }
    const byNode = new Map<string, FaultLevel>()
    for (const bus of solution?.result.buses ?? []) for (const id of bus.nodeIds) byNode.set(id, bus)
    const levels = faultLevelsAlong(graph, path, (id) => byNode.get(id))
    if (typedA === undefined && !levels[0]) throw new NoFaultLevel(path.nodeIds[0]!)
    const faultCurrentA = typedA ?? levels[0]!.ikssMaxKa * 1000
    const carriedKa = typedA === undefined && solution !== null ? solution.currentsAlong(path, devices) : devices.map(() => null)
    // For the minimum-fault checks: each device's share of a minimum-case fault at the end of its zone. The study
    // reads the path's first node (the fault) and the device's node and edge: each zone's part of the path is enough,
    // and the zones together copy the path about once.
    const zoneEndShares = devices.map((k, d) => {
      const level = levels[d === 0 ? 0 : devices[d - 1]!]
      const start = faultIndexAlong(graph, path, d === 0 ? 0 : devices[d - 1]!)
      if (solution === null || !level || k < start) return null
      const zone = { ...path, nodeIds: path.nodeIds.slice(start, k + 1), edges: path.edges.slice(start, k + 1) }
      const [carried] = solution.currentsAlong(zone, [k - start], 'min')
      return carried == null ? null : carried / level.ikssMinKa
    })
    return {
      faultCurrentA,
      deviceRatios: devices.map((k, d) => (carriedKa[d] == null ? ratios[k]! : (carriedKa[d]! * 1000) / faultCurrentA)),
      zoneEndShares,
      source: typedA === undefined ? ('shortCircuitStudy' as const) : ('typed' as const),
      faultBusId: levels[0]?.busId ?? null,
      ratios,
      levels,
      minimumFaultCheck,
    }
  }

  return {
    loadGraph,

    async islands(orgId: OrgId, siteCode: string) {
      const islands = findIslands(await loadGraph(orgId, siteCode, true))
      return {
        islandCount: islands.length,
        unsuppliedIslandCount: islands.filter((i) => !i.hasSupply).length,
        islands: islands.map((i) => ({ nodeCount: i.nodeIds.length, hasSupply: i.hasSupply, supplyIds: i.supplyIds, nodeIds: i.nodeIds })),
      }
    },

    async supplyPaths(orgId: OrgId, siteCode: string, nodeId: string) {
      return findSupplyPaths(await loadGraph(orgId, siteCode, true), nodeId)
    },

    async loops(orgId: OrgId, siteCode: string, maxLoops: number | undefined) {
      return findLoops(await loadGraph(orgId, siteCode, true), { maxLoops })
    },

    async isolated(orgId: OrgId, siteCode: string) {
      const nodeIds = findIsolatedNodes(await loadGraph(orgId, siteCode, true))
      return { count: nodeIds.length, nodeIds }
    },

    /**
     * Trip time of the node's own relay for a fault at the node: the typed `faultCurrentA`, else the short-circuit
     * study's I″k max there (as the coordination's first row sees it); 422 when its settings are incomplete or unusable.
     */
    async tripTime(orgId: OrgId, siteCode: string, nodeId: string, query: TripTimeQueryInput) {
      const graph = await loadGraph(orgId, siteCode)
      const node = nodeOf(graph, nodeId)
      const { devices, skipped } = devicesFromNodes([node])
      const device = devices[0]
      if (!device) throw new NoProtectionSettings(nodeId, skipped[0]?.reason ?? 'protectionCurve, protectionPickupA and protectionTms are not set')
      const fault = query.faultCurrentA === undefined ? faultAlong(graph, supplyPathOf(graph, nodeId, undefined), [], query) : null
      const faultCurrentA = fault?.faultCurrentA ?? query.faultCurrentA!
      const outcome = tripTime(device, faultCurrentA)
      return {
        nodeId,
        curve: outcome.curve,
        curveLabel: CURVES[outcome.curve].label,
        pickupA: device.pickupA,
        tms: device.tms,
        faultCurrentA,
        faultCurrentSource: fault ? ('shortCircuitStudy' as const) : ('typed' as const),
        faultBusId: fault?.faultBusId ?? null,
        multiple: outcome.multiple,
        trips: outcome.trips,
        tripTimeS: outcome.tripTimeS,
        formula: curveFormula(outcome.curve),
      }
    },

    /**
     * Grading along the path from the node to a supply (the nearest unless `supplyId` names one), each device at the
     * current it sees (protection.ts `pathCurrentRatios`), and each device's minimum-fault check at the end of its zone.
     */
    async coordination(orgId: OrgId, siteCode: string, nodeId: string, query: CoordinationQueryInput) {
      const graph = await loadGraph(orgId, siteCode)
      const path = supplyPathOf(graph, nodeId, query.supplyId)
      const { devices, skipped } = devicesOnSupplyPath(graph, path)
      const deviceIndex = indexesOn(path, devices)
      const fault = faultAlong(graph, path, deviceIndex, query)
      const seen = devices.map((d, i) => ({ ...d, faultCurrentA: fault.faultCurrentA * fault.deviceRatios[i]! }))
      const report = checkCoordination(seen, fault.faultCurrentA, { gradingMarginS: query.gradingMarginS })
      const checks = minimumFaultChecks(
        deviceIndex,
        devices.map((d) => d.pickupA),
        fault.ratios,
        fault.levels,
        fault.zoneEndShares,
      )
      const rows = report.rows.map((row, i) => ({ ...row, currentRatio: fault.deviceRatios[i]!, ...checks[i]! }))
      return {
        nodeId,
        supplyId: path.supplyId,
        pathNodeIds: path.nodeIds,
        ...report,
        faultCurrentSource: fault.source,
        faultBusId: fault.faultBusId,
        rows,
        minimumFaultCheck: fault.minimumFaultCheck,
        pickupAboveMinFaultCount: checks.filter((c) => c.pickupAboveMinFault === true).length,
        skipped,
      }
    },

    /**
     * The time–current curves of the devices on the node's supply path (the coordination's devices), each sampled by
     * protection.ts at the same log-spaced currents at the fault, each device at the current it sees. 400 naming `toA`
     * for an empty range; 422 when no supply is reachable.
     */
    async protectionCurves(orgId: OrgId, siteCode: string, nodeId: string, query: ProtectionCurvesQueryInput) {
      // A range typed empty is the query's fault, answered before any study the fault current may need.
      if (query.fromA !== undefined && query.toA !== undefined && !(query.toA > query.fromA)) throw curveRangeEmpty(query.fromA, query.toA)
      const graph = await loadGraph(orgId, siteCode)
      const path = supplyPathOf(graph, nodeId, query.supplyId)
      const { devices, skipped } = devicesOnSupplyPath(graph, path)
      const deviceIndex = indexesOn(path, devices)
      const fault = faultAlong(graph, path, deviceIndex, query)
      const ratioOf = (i: number) => fault.deviceRatios[i]!
      // Pickups referred to the fault's side: the currents at the fault at which each device starts to see a fault.
      const pickups = devices.map((d, i) => d.pickupA / ratioOf(i))
      // A loop, not Math.min(...pickups): spreading 200 000 arguments overflows the stack.
      let least = Number.POSITIVE_INFINITY
      let most = Number.NEGATIVE_INFINITY
      for (const p of pickups) {
        least = Math.min(least, p)
        most = Math.max(most, p)
      }
      const fromA = query.fromA ?? (pickups.length > 0 ? least : null)
      const toA = query.toA ?? (pickups.length > 0 ? 30 * most : null)
      if (fromA !== null && toA !== null && !(toA > fromA)) throw curveRangeEmpty(fromA, toA)
      const currentsA = fromA !== null && toA !== null ? logSpacedCurrents(fromA, toA, query.points ?? 100) : []
      return {
        nodeId,
        supplyId: path.supplyId,
        pathNodeIds: path.nodeIds,
        faultCurrentA: fault.faultCurrentA,
        faultCurrentSource: fault.source,
        faultBusId: fault.faultBusId,
        fromA: currentsA.length > 0 ? fromA : null,
        toA: currentsA.length > 0 ? toA : null,
        currentsA,
        devices: devices.map((device, i) => {
          const curve = resolveCurve(device.curve)
          return {
            deviceId: device.id,
            curve,
            curveLabel: CURVES[curve].label,
            pickupA: device.pickupA,
            tms: device.tms,
            currentRatio: ratioOf(i),
            faultCurrentA: fault.faultCurrentA * ratioOf(i),
            timesS: sampleCurve(
              device,
              currentsA.map((current) => current * ratioOf(i)),
            ),
          }
        }),
        skipped,
      }
    },

    /** IEC 60909 three-phase short circuit at every bus (studies/short-circuit.ts), kept per network version. */
    async shortCircuit(orgId: OrgId, siteCode: string, query: ShortCircuitQueryInput) {
      const graph = await loadGraph(orgId, siteCode)
      const solution = shortCircuitOf(graph, query)
      const { busId } = query
      if (busId !== undefined && !graph.indexOf.has(busId) && !solution.result.buses.some((b) => b.busId === busId)) throw new NodeNotInNetwork(busId)
      return { siteId: siteCode, ...solution.view({ contributions: query.contributions ?? 'largest', busId }) }
    },

    /** Newton–Raphson load flow of the network (studies/load-flow-study.ts), kept per network version; 422 for missing data. */
    async loadFlow(orgId: OrgId, siteCode: string) {
      const graph = await loadGraph(orgId, siteCode)
      let result = loadFlows.get(graph)
      if (result === undefined) loadFlows.set(graph, (result = loadFlowStudy(graph)))
      return { siteId: siteCode, ...result }
    },

    async pandapower(orgId: OrgId, siteCode: string, options: PandapowerQueryInput) {
      return toPandapowerNet(await loadGraph(orgId, siteCode), { name: siteCode, fHz: options.fHz, snMva: options.snMva })
    },
  }
}
