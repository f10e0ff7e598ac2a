import { EdgeType, NodeType } from './codes.ts'
import { cableFromSize } from './studies/cable-table.ts'
import { componentLabels } from './topology.ts'
import type { ElectricalNode, Graph } from './topology.ts'

/**
 * Export of a site network as the JSON that `pandapower.from_json` reads (layout of pandapower 3.0 files:
 * `{_module: "pandapower.auxiliary", _class: "pandapowerNet", _object: {...}}`, each table a pandas DataFrame
 * serialised with `orient: "split"` as a JSON string plus its `dtype` map). pandapower starts from
 * `create_empty_network()` and `update()`s it with what the file holds, so tables not written here (sgen,
 * std_types, results…) keep their defaults. `format_version` is "3.0.0": a newer pandapower runs
 * `convert_format`, which adds columns introduced since.
 *
 * Buses. Every node is a bus, except a two-terminal device (PowerTransformer, CircuitBreaker, FuseSwitch,
 * Disconnector) with exactly two connections, which gets one terminal bus per connection, and a PowerTransformer
 * with exactly three (a three-winding transformer), which gets three (`<id>/1`…`<id>/3`). BusbarLink and
 * TransformerWinding edges have no impedance: their two ends are the same bus. Bus `name` is the node id
 * (`<id>/1`, `<id>/2` for the terminals of a two-terminal device, in edge order). Bus voltage comes from the
 * `ratedVoltageV` of the nodes on the bus (not transformers or switching devices, whose rating is not the
 * system voltage) and spreads through lines and switches, never across a transformer.
 *
 * Node types:
 * - UtilitySupply → ext_grid (vm_pu from voltageSetpointPu, else 1.0; va 0°). `impedanceOhms` is not exported.
 * - Generator → gen, p_mw = activePowerKw (else ratedPowerKw)/1000, vm_pu from voltageSetpointPu, else 1.0; it is
 *   the slack (`slack: true`) when its island
 *   has no utility supply and it is that island's first generator.
 * - PowerTransformer (3 connections) → trafo3w, its windings' buses by the study's hvNodeId, mvNodeId, lvNodeId
 *   (without them: buses only, noted), sn_*_mva, vn_*_kv from the per-winding study parameters, vk_hv_percent /
 *   vk_mv_percent / vk_lv_percent = ukHvMvPercent / ukMvLvPercent / ukHvLvPercent (pandapower's HV–MV, MV–LV,
 *   HV–LV) and their vkr, vector_group without its numbers; no losses, no tap changer.
 * - PowerTransformer (2 connections) → trafo. HV side = the side with the higher bus voltage; when unknown,
 *   the side whose edge points into the transformer. sn_mva = ratedPowerKw/1000 (the kVA rating); vk_percent
 *   from the IEC 60076-5 Table 1 minimum for the rating (4 % ≤ 630 kVA … 12.5 % ≤ 100 MVA); vkr_percent 1.0
 *   (0.5 above 2.5 MVA); no-load losses, phase shift and tap changer omitted.
 * - CircuitBreaker / FuseSwitch / Disconnector (2 connections) → closed bus-bus switch, type CB / LBS / DS,
 *   in_ka = ratedCurrentA/1000. pandapower has no fuse; protection settings do not map.
 * - Switchboard, MCC → bus of type "b". Motor → motor (pn_mech_mw = ratedPowerKw/1000, cos_phi 0.85,
 *   efficiency 100 %, the pandapower default). FeederLoad → load (p = ratedPowerKw/1000, cos φ 0.9 lagging).
 *   CapacitorBank → shunt with q_mvar = −ratedPowerKw/1000 (the kvar rating is read from ratedPowerKw).
 *   UpsBattery → storage at p = 0 (idle). VariableSpeedDrive, EarthingPoint → bus only.
 *
 * Edge types: Cable / OverheadLine → line, length_km = the target node's cableLengthM/1000 (the node a
 * circuit feeds records its cable), 1 m when missing; per-km values of one pandapower standard type chosen
 * by voltage (table LINE_STD_TYPES below) unless the study's values or the cable table apply (below). BusTie → closed bus-bus switch (CB).
 *
 * Study parameters (issue 31, the node's `study`), when present, replace the approximations above: ext_grid
 * s_sc_max_mva / s_sc_min_mva (from the power, or √3·Un·I″kQ) and rx_max = rx_min = rxRatio; a line's r/x per km
 * from the fed node's rOhmPerKm / xOhmPerKm or the cable table's for its cableSize (std_type null, c 0) and max_i_ka from
 * its ampacityA; trafo sn_mva, vn_hv_kv, vn_lv_kv, vk_percent,
 * vkr_percent (ukr·1/√(1+(X/R)²) from xrRatio) and vector_group; gen sn_mva, vn_kv, xdss_pu, rdss_ohm, cos_phi;
 * motor pn_mech_mw, cos_phi_n, efficiency_n_percent, lrc_pu, vn_kv, rx; load p from activePowerKw, q from
 * powerFactor; ext_grid and gen vm_pu from voltageSetpointPu, gen p_mw from activePowerKw. Earth faults: ext_grid
 * x0x_max = x0x_min = x0x1Ratio and r0x0_max = r0x0_min = r0x0Ratio; a line's r0/x0_ohm_per_km and c0_nf_per_km
 * (0 without c0NfPerKm); trafo vector_group without its phase-shift number (pandapower refuses one), vk0_percent,
 * vkr0_percent, mag0_percent 1e9 (the magnetising zero-sequence impedance neglected, as the study does), mag0_rx 0,
 * si0_hv_partial 0.9 (no effect with that magnetising impedance). So pandapower's `calc_sc` (fault "3ph", "2ph",
 * "1ph") and `runpp` on the export answer what the short-circuit study and the load flow answer. Not exported:
 * transformer and generator earthing impedances and generator earthing (pandapower has no columns for them outside
 * power station units). A generator's unitTransformerId → gen.power_station_trafo (the trafo row) with
 * trafo.power_station_unit true, trafo.oltc from tapChanger `onLoad`, pt_percent = offLoadTapPercent (else 0), and
 * gen.pg_percent = voltageRangePercent (else 0): pandapower's KS / KSO, as the study.
 *
 * Does not map: impedanceOhms, cableSize, protection settings, tagBindings, metadata, node names, switch
 * open/closed state (all exported closed), three-winding transformers' zero-sequence data, converter behaviour of VSDs.
 * Each approximation applied is listed in `notes` with the ids it touched.
 */

type Dtype = 'object' | 'float64' | 'bool' | 'uint32' | 'int64'
type Cell = string | number | boolean | null
type TableSpec = readonly (readonly [column: string, dtype: Dtype])[]

/** The tap changer's columns, in pandapower's order, shared by `trafo` and `trafo3w`. */
const TAP_COLUMNS = [
  ['tap_side', 'object'],
  ['tap_neutral', 'float64'],
  ['tap_min', 'float64'],
  ['tap_max', 'float64'],
  ['tap_step_percent', 'float64'],
  ['tap_step_degree', 'float64'],
  ['tap_pos', 'float64'],
] as const
/** A transformer's TAP_COLUMNS when it has no tap changer the study models. */
const NO_TAP_CHANGER = TAP_COLUMNS.map(() => null)

// Column sets and dtypes as pandapower 3.0 writes them (create_empty_network defaults).
const TABLES = {
  bus: [
    ['name', 'object'],
    ['vn_kv', 'float64'],
    ['type', 'object'],
    ['zone', 'object'],
    ['in_service', 'bool'],
    ['geo', 'object'],
  ],
  line: [
    ['name', 'object'],
    ['std_type', 'object'],
    ['from_bus', 'uint32'],
    ['to_bus', 'uint32'],
    ['length_km', 'float64'],
    ['r_ohm_per_km', 'float64'],
    ['x_ohm_per_km', 'float64'],
    ['c_nf_per_km', 'float64'],
    ['g_us_per_km', 'float64'],
    ['max_i_ka', 'float64'],
    ['df', 'float64'],
    ['parallel', 'uint32'],
    ['type', 'object'],
    ['in_service', 'bool'],
    ['geo', 'object'],
    ['r0_ohm_per_km', 'float64'],
    ['x0_ohm_per_km', 'float64'],
    ['c0_nf_per_km', 'float64'],
  ],
  trafo: [
    ['name', 'object'],
    ['std_type', 'object'],
    ['hv_bus', 'uint32'],
    ['lv_bus', 'uint32'],
    ['sn_mva', 'float64'],
    ['vn_hv_kv', 'float64'],
    ['vn_lv_kv', 'float64'],
    ['vk_percent', 'float64'],
    ['vkr_percent', 'float64'],
    ['pfe_kw', 'float64'],
    ['i0_percent', 'float64'],
    ['shift_degree', 'float64'],
    ...TAP_COLUMNS,
    ['tap_phase_shifter', 'bool'],
    ['parallel', 'uint32'],
    ['df', 'float64'],
    ['in_service', 'bool'],
    ['tap_changer_type', 'object'],
    ['vector_group', 'object'],
    ['vk0_percent', 'float64'],
    ['vkr0_percent', 'float64'],
    ['mag0_percent', 'float64'],
    ['mag0_rx', 'float64'],
    ['si0_hv_partial', 'float64'],
    ['oltc', 'bool'],
    ['power_station_unit', 'bool'],
    ['pt_percent', 'float64'],
  ],
  trafo3w: [
    ['name', 'object'],
    ['std_type', 'object'],
    ['hv_bus', 'uint32'],
    ['mv_bus', 'uint32'],
    ['lv_bus', 'uint32'],
    ['sn_hv_mva', 'float64'],
    ['sn_mv_mva', 'float64'],
    ['sn_lv_mva', 'float64'],
    ['vn_hv_kv', 'float64'],
    ['vn_mv_kv', 'float64'],
    ['vn_lv_kv', 'float64'],
    ['vk_hv_percent', 'float64'],
    ['vk_mv_percent', 'float64'],
    ['vk_lv_percent', 'float64'],
    ['vkr_hv_percent', 'float64'],
    ['vkr_mv_percent', 'float64'],
    ['vkr_lv_percent', 'float64'],
    ['pfe_kw', 'float64'],
    ['i0_percent', 'float64'],
    ['shift_mv_degree', 'float64'],
    ['shift_lv_degree', 'float64'],
    ...TAP_COLUMNS,
    ['tap_at_star_point', 'bool'],
    ['tap_changer_type', 'object'],
    ['in_service', 'bool'],
    ['vector_group', 'object'],
  ],
  switch: [
    ['bus', 'int64'],
    ['element', 'int64'],
    ['et', 'object'],
    ['type', 'object'],
    ['closed', 'bool'],
    ['name', 'object'],
    ['z_ohm', 'float64'],
    ['in_ka', 'float64'],
  ],
  ext_grid: [
    ['name', 'object'],
    ['bus', 'uint32'],
    ['vm_pu', 'float64'],
    ['va_degree', 'float64'],
    ['slack_weight', 'float64'],
    ['in_service', 'bool'],
    ['s_sc_max_mva', 'float64'],
    ['s_sc_min_mva', 'float64'],
    ['rx_max', 'float64'],
    ['rx_min', 'float64'],
    ['x0x_max', 'float64'],
    ['x0x_min', 'float64'],
    ['r0x0_max', 'float64'],
    ['r0x0_min', 'float64'],
  ],
  gen: [
    ['name', 'object'],
    ['bus', 'uint32'],
    ['p_mw', 'float64'],
    ['vm_pu', 'float64'],
    ['sn_mva', 'float64'],
    ['min_q_mvar', 'float64'],
    ['max_q_mvar', 'float64'],
    ['scaling', 'float64'],
    ['slack', 'bool'],
    ['in_service', 'bool'],
    ['slack_weight', 'float64'],
    ['type', 'object'],
    ['vn_kv', 'float64'],
    ['xdss_pu', 'float64'],
    ['rdss_ohm', 'float64'],
    ['cos_phi', 'float64'],
    ['pg_percent', 'float64'],
    ['power_station_trafo', 'float64'],
  ],
  load: [
    ['name', 'object'],
    ['bus', 'uint32'],
    ['p_mw', 'float64'],
    ['q_mvar', 'float64'],
    ['const_z_percent', 'float64'],
    ['const_i_percent', 'float64'],
    ['sn_mva', 'float64'],
    ['scaling', 'float64'],
    ['in_service', 'bool'],
    ['type', 'object'],
  ],
  motor: [
    ['name', 'object'],
    ['bus', 'int64'],
    ['pn_mech_mw', 'float64'],
    ['loading_percent', 'float64'],
    ['cos_phi', 'float64'],
    ['cos_phi_n', 'float64'],
    ['efficiency_percent', 'float64'],
    ['efficiency_n_percent', 'float64'],
    ['lrc_pu', 'float64'],
    ['vn_kv', 'float64'],
    ['scaling', 'float64'],
    ['in_service', 'bool'],
    ['rx', 'float64'],
  ],
  shunt: [
    ['bus', 'uint32'],
    ['name', 'object'],
    ['q_mvar', 'float64'],
    ['p_mw', 'float64'],
    ['vn_kv', 'float64'],
    ['step', 'uint32'],
    ['max_step', 'uint32'],
    ['in_service', 'bool'],
  ],
  storage: [
    ['name', 'object'],
    ['bus', 'int64'],
    ['p_mw', 'float64'],
    ['q_mvar', 'float64'],
    ['sn_mva', 'float64'],
    ['soc_percent', 'float64'],
    ['min_e_mwh', 'float64'],
    ['max_e_mwh', 'float64'],
    ['scaling', 'float64'],
    ['in_service', 'bool'],
    ['type', 'object'],
  ],
} as const satisfies Record<string, TableSpec>

type TableName = keyof typeof TABLES

/** Per-km values copied from pandapower's basic standard types (std_types.py), so std_type and values agree. */
export const LINE_STD_TYPES = [
  { forEdge: 'cable', maxKv: 1, std: 'NAYY 4x150 SE', r: 0.208, x: 0.08, c: 261, maxIKa: 0.27, type: 'cs' },
  { forEdge: 'cable', maxKv: 12, std: 'NA2XS2Y 1x185 RM/25 6/10 kV', r: 0.161, x: 0.11, c: 406, maxIKa: 0.358, type: 'cs' },
  { forEdge: 'cable', maxKv: Infinity, std: 'NA2XS2Y 1x185 RM/25 12/20 kV', r: 0.161, x: 0.117, c: 273, maxIKa: 0.362, type: 'cs' },
  { forEdge: 'overhead', maxKv: 30, std: '149-AL1/24-ST1A 20.0', r: 0.194, x: 0.337, c: 10.5, maxIKa: 0.47, type: 'ol' },
  { forEdge: 'overhead', maxKv: Infinity, std: '149-AL1/24-ST1A 110.0', r: 0.194, x: 0.41, c: 8.75, maxIKa: 0.47, type: 'ol' },
] as const

// IEC 60076-5 Table 1: minimum short-circuit impedance by rated power.
const VK_PERCENT_BY_KVA = [
  [630, 4],
  [1250, 5],
  [2500, 6],
  [6300, 7],
  [25000, 8],
  [40000, 10],
  [63000, 11],
  [Infinity, 12.5],
] as const

export interface PandasFrameJson {
  readonly _module: 'pandas.core.frame'
  readonly _class: 'DataFrame'
  /** `{"columns": [...], "index": [...], "data": [[...]]}` as a string, the way pandas `to_json` writes it. */
  readonly _object: string
  readonly orient: 'split'
  readonly dtype: Record<string, string>
  readonly is_multiindex: false
  readonly is_multicolumn: false
}

export interface PandapowerNetJson {
  readonly _module: 'pandapower.auxiliary'
  readonly _class: 'pandapowerNet'
  readonly _object: Record<TableName, PandasFrameJson> & {
    readonly version: string
    readonly format_version: string
    readonly name: string
    readonly f_hz: number
    readonly sn_mva: number
  }
}

export interface ExportNote {
  readonly code: string
  readonly message: string
  readonly count: number
  /** The first 20 node ids concerned. */
  readonly nodeIds: string[]
}

export interface PandapowerExport {
  readonly net: PandapowerNetJson
  readonly notes: ExportNote[]
  /** Index-aligned with `graph.nodes`: the pandapower bus index(es) each node became (two for a two-terminal device). */
  readonly busesByNodeIndex: number[][]
}

export interface PandapowerExportOptions {
  readonly name?: string
  readonly fHz?: number
  readonly snMva?: number
}

// Codes copied into module constants so the per-node loops touch no imported binding (measurably slower under tsx).
const {
  UtilitySupply,
  Generator,
  PowerTransformer,
  Switchboard,
  MotorControlCentre,
  CircuitBreaker,
  FuseSwitch,
  Disconnector,
  Motor,
  VariableSpeedDrive,
  FeederLoad,
  CapacitorBank,
  EarthingPoint,
  UpsBattery,
} = NodeType
const { Cable, OverheadLine, BusbarLink, TransformerWinding, BusTie } = EdgeType
const TWO_TERMINAL: ReadonlySet<number> = new Set([PowerTransformer, CircuitBreaker, FuseSwitch, Disconnector])
const SWITCH_TYPE: Readonly<Record<number, string>> = { [CircuitBreaker]: 'CB', [FuseSwitch]: 'LBS', [Disconnector]: 'DS' }
const LOAD_TAN_PHI = Math.tan(Math.acos(0.9))

/** A study parameter of the node (schemas.ts `NodeStudy`), or null. */
function studyValue(node: ElectricalNode, key: string): number | null {
  const value = node.study?.[key]
  return typeof value === 'number' ? value : null
}

/**
 * mag0_percent of every exported transformer: the studies neglect the magnetising zero-sequence impedance, which
 * pandapower reads for YNyn, Yyn and YNy only; a ratio this large makes it an open circuit there too.
 */
const ZERO_SEQUENCE_MAGNETISING_RATIO = 1e9

const mul = (factor: number, value: number | null): number | null => (value === null ? null : factor * value)

function positive(value: number | null | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : null
}

/** Disjoint sets over 0…size−1 (buses, voltage zones; the studies' network parts). */
export class UnionFind {
  private readonly parent: Int32Array
  constructor(size: number) {
    this.parent = Int32Array.from({ length: size }, (_, i) => i)
  }
  find(x: number): number {
    let root = x
    while (this.parent[root] !== root) root = this.parent[root]!
    while (this.parent[x] !== root) {
      const next = this.parent[x]!
      this.parent[x] = root
      x = next
    }
    return root
  }
  union(a: number, b: number): void {
    const ra = this.find(a)
    const rb = this.find(b)
    if (ra !== rb) this.parent[Math.max(ra, rb)] = Math.min(ra, rb)
  }
}

/** Where a two-terminal node sits: its bus per connection, the buses and their nominal voltages. */
export interface BusModel {
  readonly isPair: (i: number) => boolean
  /** A transformer with exactly three connections: three terminals, `termBase` + its connection's adjacency slot. */
  readonly isTriple: (i: number) => boolean
  readonly termBase: Int32Array
  readonly busOfTerm: Int32Array
  /** The bus of node `i` at its connection by edge `e`. */
  readonly busOf: (i: number, e: number) => number
  /** The bus of node `i` at its connection to the neighbour with id `neighbourId`; null when it has none. */
  readonly busToward: (i: number, neighbourId: string) => number | null
  readonly busName: string[]
  readonly busIsBar: boolean[]
  /** kV from the `ratedVoltageV` of the nodes on the bus (null: none). */
  readonly busKv: (number | null)[]
  /** kV of the bus or, failing that, of its voltage zone (buses joined by lines and switches). */
  readonly vn: (number | null)[]
  readonly busCount: number
  readonly busesByNodeIndex: number[][]
}

/**
 * The buses of a network (shared by the pandapower export and the studies): every node is a bus, except a
 * two-terminal device with exactly two connections, which gets one terminal per connection; BusbarLink and
 * TransformerWinding edges join their ends into one bus.
 */
export function buildBuses(graph: Graph, note: (code: string, message: string, nodeId: string) => void): BusModel {
  const { nodes, edges, adjStart, adjEdge, edgeSource, edgeTarget } = graph
  const n = nodes.length
  // Terminals: one per node, two for a two-terminal device with exactly two connections, three for a transformer
  // with exactly three (a three-winding transformer: one terminal per winding).
  const degree = (i: number) => adjStart[i + 1]! - adjStart[i]!
  const pair = Uint8Array.from(nodes, (node, i) => (TWO_TERMINAL.has(node.nodeType) && degree(i) === 2 ? 1 : 0))
  const triple = Uint8Array.from(nodes, (node, i) => (node.nodeType === PowerTransformer && degree(i) === 3 ? 1 : 0))
  const isPair = (i: number): boolean => pair[i] === 1
  const isTriple = (i: number): boolean => triple[i] === 1
  const terminals = (i: number): number => 1 + pair[i]! + 2 * triple[i]!
  const termBase = new Int32Array(n)
  let termCount = 0
  for (let i = 0; i < n; i++) {
    termBase[i] = termCount
    termCount += terminals(i)
  }
  /** A terminal per connection, in adjacency order, for a two- or three-terminal node. */
  const terminalOf = (i: number, e: number): number => {
    if (terminals(i) === 1) return termBase[i]!
    let slot = 0
    while (adjEdge[adjStart[i]! + slot] !== e) slot++
    return termBase[i]! + slot
  }
  const uf = new UnionFind(termCount)
  for (let e = 0; e < edges.length; e++) {
    const type = edges[e]!.edgeType
    if (type === BusbarLink || type === TransformerWinding) {
      uf.union(terminalOf(edgeSource[e]!, e), terminalOf(edgeTarget[e]!, e))
    }
  }

  // Buses, numbered in order of their first terminal; named after the first whole node on them.
  const busOfRoot = new Int32Array(termCount).fill(-1)
  const busOfTerm = new Int32Array(termCount)
  const busName: string[] = []
  const busNamedByNode: boolean[] = []
  const busIsBar: boolean[] = []
  const busKv: (number | null)[] = []
  const busesByNodeIndex: number[][] = []
  for (let i = 0; i < n; i++) {
    const node = nodes[i]!
    const twoTerminal = terminals(i) > 1
    const nodeBuses: number[] = []
    busesByNodeIndex.push(nodeBuses)
    for (let slot = 0; slot < terminals(i); slot++) {
      const t = termBase[i]! + slot
      const root = uf.find(t)
      if (busOfRoot[root] === -1) {
        busOfRoot[root] = busName.length
        busName.push(twoTerminal ? `${node.id}/${slot + 1}` : node.id)
        busNamedByNode.push(!twoTerminal)
        busIsBar.push(false)
        busKv.push(null)
      }
      const bus = busOfRoot[root]!
      busOfTerm[t] = bus
      nodeBuses.push(bus)
      if (!twoTerminal && !busNamedByNode[bus]) {
        busName[bus] = node.id
        busNamedByNode[bus] = true
      }
      const type = node.nodeType
      if (type === Switchboard || type === MotorControlCentre || type === UtilitySupply) busIsBar[bus] = true
      // A breaker's or transformer's rating (12 kV for an 11 kV board) is not the system voltage.
      const kv = TWO_TERMINAL.has(type) ? null : positive(node.ratedVoltageV)
      if (kv === null) continue
      const known = busKv[bus]
      if (known == null) busKv[bus] = kv / 1000
      else if (known !== kv / 1000) note('BusVoltageConflict', 'Nodes on one bus disagree on ratedVoltageV; the first was used.', node.id)
    }
  }
  const busCount = busName.length
  const busOf = (i: number, e: number): number => busOfTerm[terminalOf(i, e)]!
  const busToward = (i: number, neighbourId: string): number | null => {
    for (let a = adjStart[i]!; a < adjStart[i + 1]!; a++) {
      const e = adjEdge[a]!
      if (nodes[edgeSource[e] === i ? edgeTarget[e]! : edgeSource[e]!]!.id === neighbourId) return busOf(i, e)
    }
    return null
  }

  // Voltage zones: buses joined by lines or switches share a nominal voltage.
  const zones = new UnionFind(busCount)
  for (let e = 0; e < edges.length; e++) {
    const type = edges[e]!.edgeType
    if (type === Cable || type === OverheadLine || type === BusTie) {
      zones.union(busOf(edgeSource[e]!, e), busOf(edgeTarget[e]!, e))
    }
  }
  for (let i = 0; i < n; i++) {
    if (isPair(i) && nodes[i]!.nodeType !== PowerTransformer) zones.union(busOfTerm[termBase[i]!]!, busOfTerm[termBase[i]! + 1]!)
  }
  const zoneKv = new Map<number, number>()
  for (let b = 0; b < busCount; b++) {
    const kv = busKv[b]
    if (kv != null && !zoneKv.has(zones.find(b))) zoneKv.set(zones.find(b), kv)
  }
  const vn: (number | null)[] = busKv.map((kv, b) => kv ?? zoneKv.get(zones.find(b)) ?? null)
  return { isPair, isTriple, termBase, busOfTerm, busOf, busToward, busName, busIsBar, busKv, vn, busCount, busesByNodeIndex }
}

/** Builds the pandapower JSON for a validated network; never throws for missing ratings, it notes them. */
export function toPandapowerNet(graph: Graph, options: PandapowerExportOptions = {}): PandapowerExport {
  const { nodes, edges, adjStart, adjEdge, edgeSource, edgeTarget } = graph
  const n = nodes.length
  const notes = new Map<string, { message: string; count: number; nodeIds: string[] }>()
  const note = (code: string, message: string, nodeId: string): void => {
    const entry = notes.get(code) ?? { message, count: 0, nodeIds: [] }
    entry.count++
    if (entry.nodeIds.length < 20) entry.nodeIds.push(nodeId)
    notes.set(code, entry)
  }

  const { isPair, isTriple, termBase, busOfTerm, busOf, busToward, busName, busIsBar, busKv, vn, busCount, busesByNodeIndex } = buildBuses(graph, note)
  const rows: Record<TableName, Cell[][]> = {
    bus: [],
    line: [],
    trafo: [],
    trafo3w: [],
    switch: [],
    ext_grid: [],
    gen: [],
    load: [],
    motor: [],
    shunt: [],
    storage: [],
  }
  for (let b = 0; b < busCount; b++) {
    rows.bus.push([busName[b]!, vn[b] ?? null, busIsBar[b] ? 'b' : 'n', null, true, null])
    if (vn[b] === null) note('BusVoltageUnknown', 'No ratedVoltageV on or connected to this bus; vn_kv left empty (pandapower needs it).', busName[b]!)
  }

  for (let e = 0; e < edges.length; e++) {
    const edge = edges[e]!
    const s = edgeSource[e]!
    const t = edgeTarget[e]!
    const from = busOf(s, e)
    const to = busOf(t, e)
    if (edge.edgeType === BusTie) {
      rows.switch.push([from, to, 'b', 'CB', true, `${edge.sourceId}>${edge.targetId}`, 0, null])
      continue
    }
    if (edge.edgeType !== Cable && edge.edgeType !== OverheadLine) continue
    if (from === to) {
      note('LineWithinOneBus', 'A cable or line joins two points already on the same bus; skipped.', edge.targetId)
      continue
    }
    const lengthM = positive(nodes[t]!.cableLengthM)
    if (lengthM === null) note('CableLengthMissing', 'No cableLengthM on the node the circuit feeds; 1 m assumed.', edge.targetId)
    const kv = vn[from] ?? vn[to]
    if (busKv[from] != null && busKv[to] != null && busKv[from] !== busKv[to]) {
      note('LineAcrossVoltages', 'A cable or line joins buses rated for different voltages; check the data.', edge.targetId)
    }
    if (kv === null) note('LineVoltageUnknown', 'Line voltage unknown; the 6/10 kV cable or 20 kV line type was used.', edge.targetId)
    const kind = edge.edgeType === Cable ? 'cable' : 'overhead'
    const std = LINE_STD_TYPES.find((l) => l.forEdge === kind && (kv ?? (kind === 'cable' ? 10 : 20)) <= l.maxKv)!
    // The study's per-km values of the circuit (the fed node's, else the cable table's for its cableSize, as the
    // studies read them) replace the standard type's; its ampacityA replaces the type's max_i_ka.
    const fed = nodes[t]!
    const table = edge.edgeType === Cable && fed.cableSize ? cableFromSize(fed.cableSize) : null
    const [ownR, ownX] = [studyValue(fed, 'rOhmPerKm'), studyValue(fed, 'xOhmPerKm')]
    const given = ownR !== null && ownX !== null
    const r = given ? ownR : (table?.rOhmPerKm ?? null)
    const x = given ? ownX : (table?.xOhmPerKm ?? null)
    const own = r !== null && x !== null
    const ampacityA = studyValue(fed, 'ampacityA')
    rows.line.push([
      `${edge.sourceId}>${edge.targetId}`,
      own ? null : std.std,
      from,
      to,
      (lengthM ?? 1) / 1000,
      own ? r : std.r,
      own ? x : std.x,
      own ? 0 : std.c,
      0,
      ampacityA === null ? std.maxIKa : ampacityA / 1000,
      1,
      1,
      std.type,
      true,
      null,
      studyValue(fed, 'r0OhmPerKm'),
      studyValue(fed, 'x0OhmPerKm'),
      studyValue(fed, 'c0NfPerKm') ?? 0,
    ])
  }

  const { labels } = componentLabels(graph)
  const islandHasSlack = new Uint8Array(n)
  for (let i = 0; i < n; i++) if (nodes[i]!.nodeType === UtilitySupply) islandHasSlack[labels[i]!] = 1
  const islandHasSupply = islandHasSlack.slice()
  for (let i = 0; i < n; i++) {
    const node = nodes[i]!
    if (node.nodeType === Generator || node.nodeType === UpsBattery) islandHasSupply[labels[i]!] = 1
  }

  /** Generators of a power station unit and the id of their unit transformer (its trafo row is known after the loop). */
  const unitGenerators: [Cell[], string][] = []
  const trafoRowOf = new Map<string, number>()
  for (let i = 0; i < n; i++) {
    const node = nodes[i]!
    const bus = busOfTerm[termBase[i]!]!
    const kw = positive(node.ratedPowerKw)
    const mw = kw === null ? null : kw / 1000
    if (islandHasSupply[labels[i]!] === 0) {
      note('IslandWithoutSupply', 'Node in an island with no supply; pandapower will leave it unsupplied.', node.id)
      islandHasSupply[labels[i]!] = 2
    }
    switch (node.nodeType) {
      case UtilitySupply: {
        const kv = vn[bus] ?? null
        const sc = (mva: string, ka: string) => studyValue(node, mva) ?? (kv === null ? null : mul(Math.sqrt(3) * kv, studyValue(node, ka)))
        const rx = studyValue(node, 'rxRatio')
        const vm = studyValue(node, 'voltageSetpointPu') ?? 1
        const [x0x, r0x0] = [studyValue(node, 'x0x1Ratio'), studyValue(node, 'r0x0Ratio')]
        rows.ext_grid.push([
          node.id,
          bus,
          vm,
          0,
          1,
          true,
          sc('scPowerMaxMva', 'scCurrentMaxKa'),
          sc('scPowerMinMva', 'scCurrentMinKa'),
          rx,
          rx,
          x0x,
          x0x,
          r0x0,
          r0x0,
        ])
        break
      }
      case Generator: {
        const slack = islandHasSlack[labels[i]!] === 0
        if (slack) islandHasSlack[labels[i]!] = 1
        const snMva = mul(0.001, studyValue(node, 'ratedPowerKva'))
        const urKv = studyValue(node, 'ratedVoltageKv')
        const xd = mul(0.01, studyValue(node, 'xdSubtransientPercent'))
        // RG = (RG/X″d)·x″d·UrG²/SrG
        const rdss = snMva === null || urKv === null || xd === null ? null : mul((xd * urKv * urKv) / snMva, studyValue(node, 'rxRatio'))
        rows.gen.push([
          node.id,
          bus,
          mul(0.001, studyValue(node, 'activePowerKw')) ?? requirePower(node, mw, 'generator'),
          studyValue(node, 'voltageSetpointPu') ?? 1,
          snMva,
          null,
          null,
          1,
          slack,
          true,
          slack ? 1 : 0,
          null,
          urKv,
          xd,
          rdss,
          studyValue(node, 'powerFactor'),
          studyValue(node, 'voltageRangePercent') ?? 0,
          null,
        ])
        const unit = node.study?.unitTransformerId
        if (typeof unit === 'string') unitGenerators.push([rows.gen.at(-1)!, unit])
        break
      }
      case UpsBattery:
        rows.storage.push([node.id, bus, 0, 0, mw, null, 0, null, 1, true, null])
        break
      case Motor: {
        const pn = mul(0.001, studyValue(node, 'ratedPowerKw')) ?? requirePower(node, mw, 'motor')
        const cosPhi = studyValue(node, 'powerFactor')
        const eta = studyValue(node, 'efficiencyPercent')
        const kv = studyValue(node, 'ratedVoltageKv') ?? vn[bus] ?? null
        rows.motor.push([
          node.id,
          bus,
          pn,
          100,
          cosPhi ?? 0.85,
          cosPhi,
          eta ?? 100,
          eta,
          studyValue(node, 'lockedRotorRatio'),
          kv,
          1,
          true,
          studyValue(node, 'rxRatio'),
        ])
        break
      }
      case FeederLoad: {
        const p = mul(0.001, studyValue(node, 'activePowerKw')) ?? requirePower(node, mw, 'load')
        const cosPhi = studyValue(node, 'powerFactor')
        rows.load.push([node.id, bus, p, p * (cosPhi === null ? LOAD_TAN_PHI : Math.tan(Math.acos(cosPhi))), 0, 0, null, 1, true, 'wye'])
        break
      }
      case CapacitorBank: {
        const kv = positive(node.ratedVoltageV)
        rows.shunt.push([bus, node.id, -requirePower(node, mw, 'capacitor bank'), 0, kv === null ? (vn[bus] ?? null) : kv / 1000, 1, 1, true])
        break
      }
      case VariableSpeedDrive:
      case EarthingPoint:
        note('NotModelled', 'VSDs and earthing points have no load-flow model; exported as a plain bus.', node.id)
        break
      default:
        if (isTriple(i)) exportThreeWinding(i, node)
        else if (TWO_TERMINAL.has(node.nodeType)) exportTwoTerminal(i, node, rows, note)
    }
  }
  for (const [row, transformerId] of unitGenerators) {
    const trafo = trafoRowOf.get(transformerId)
    if (trafo === undefined)
      note('UnitTransformerNotExported', 'unitTransformerId names no exported two-winding transformer; exported as a plain generator.', row[0] as string)
    else {
      row[row.length - 1] = trafo
      const trafoRow = rows.trafo[trafo]!
      trafoRow[trafoRow.length - 2] = true
    }
  }

  /**
   * A three-winding transformer → trafo3w: its windings' buses by hvNodeId, mvNodeId, lvNodeId (pandapower's
   * vk_hv_percent is HV–MV, vk_mv_percent MV–LV, vk_lv_percent HV–LV, each on the smaller rated power of its pair,
   * as the study reads ukHvMvPercent, ukMvLvPercent, ukHvLvPercent); no tap changer, no losses.
   */
  function exportThreeWinding(i: number, node: ElectricalNode): void {
    const bus = (parameter: string): number | null => {
      const id = node.study?.[parameter]
      return typeof id === 'string' ? busToward(i, id) : null
    }
    const [hv, mv, lv] = [bus('hvNodeId'), bus('mvNodeId'), bus('lvNodeId')]
    if (hv === null || mv === null || lv === null) {
      note('WindingsUnknown', 'A transformer with three connections whose hvNodeId, mvNodeId and lvNodeId do not name them; exported as buses only.', node.id)
      return
    }
    const kva = (parameter: string) => mul(0.001, studyValue(node, parameter))
    const group = node.study?.vectorGroup
    rows.trafo3w.push([
      node.id,
      null,
      hv,
      mv,
      lv,
      kva('hvRatedPowerKva'),
      kva('mvRatedPowerKva'),
      kva('lvRatedPowerKva'),
      studyValue(node, 'hvRatedVoltageKv'),
      studyValue(node, 'mvRatedVoltageKv'),
      studyValue(node, 'lvRatedVoltageKv'),
      studyValue(node, 'ukHvMvPercent'),
      studyValue(node, 'ukMvLvPercent'),
      studyValue(node, 'ukHvLvPercent'),
      studyValue(node, 'urHvMvPercent'),
      studyValue(node, 'urMvLvPercent'),
      studyValue(node, 'urHvLvPercent'),
      0,
      0,
      0,
      0,
      ...NO_TAP_CHANGER,
      false,
      null,
      true,
      // pandapower takes the vector group without its phase-shift numbers.
      typeof group === 'string' ? group.replace(/\d+/g, '') : null,
    ])
  }

  function requirePower(node: ElectricalNode, mw: number | null, what: string): number {
    if (mw === null) note('RatingMissing', `No ratedPowerKw; the ${what} was exported at 0.`, node.id)
    return mw ?? 0
  }

  function exportTwoTerminal(i: number, node: ElectricalNode, out: typeof rows, add: typeof note): void {
    if (!isPair(i)) {
      add('DeviceNotBetweenTwoConnections', 'A transformer or switching device without exactly two connections; exported as a bus only.', node.id)
      return
    }
    const a = busOfTerm[termBase[i]!]!
    const b = busOfTerm[termBase[i]! + 1]!
    if (a === b) {
      add('DeviceShorted', 'Both sides of the device are the same bus; skipped.', node.id)
      return
    }
    if (node.nodeType !== PowerTransformer) {
      const inKa = positive(node.ratedCurrentA)
      out.switch.push([a, b, 'b', SWITCH_TYPE[node.nodeType]!, true, node.id, 0, inKa === null ? null : inKa / 1000])
      return
    }
    const [va, vb] = [vn[a], vn[b]]
    let aIsHv: boolean
    if (va != null && vb != null && va !== vb) aIsHv = va > vb
    else {
      add('TransformerSidesByDirection', 'Winding voltages unknown or equal; HV side taken from edge direction.', node.id)
      aIsHv = edgeTarget[adjEdge[adjStart[i]!]!] === i || edgeTarget[adjEdge[adjStart[i]! + 1]!] !== i
    }
    const [hv, lv] = aIsHv ? [a, b] : [b, a]
    const uk = studyValue(node, 'ukPercent')
    const ur = studyValue(node, 'urPercent')
    const xr = studyValue(node, 'xrRatio')
    let kva = studyValue(node, 'ratedPowerKva') ?? positive(node.ratedPowerKw)
    if (kva === null) {
      add('RatingMissing', 'No ratedPowerKw (kVA) on the transformer; 1000 kVA assumed.', node.id)
      kva = 1000
    }
    // The study's ukr and uRr (or X/R) when the node holds them; else the IEC 60076-5 minimum for the rating.
    const vk = uk ?? VK_PERCENT_BY_KVA.find(([limit]) => kva <= limit)![1]
    const vkr = ur ?? (uk !== null && xr !== null ? uk / Math.sqrt(1 + xr * xr) : kva > 2500 ? 0.5 : 1)
    out.trafo.push([
      node.id,
      null,
      hv,
      lv,
      kva / 1000,
      studyValue(node, 'hvRatedVoltageKv') ?? vn[hv] ?? null,
      studyValue(node, 'lvRatedVoltageKv') ?? vn[lv] ?? null,
      vk,
      vkr,
      0,
      0,
      0,
      ...NO_TAP_CHANGER,
      false,
      1,
      1,
      true,
      null,
      // pandapower takes the vector group without its phase-shift number.
      typeof node.study?.vectorGroup === 'string' ? node.study.vectorGroup.replace(/\d+$/, '') : null,
      studyValue(node, 'uk0Percent'),
      studyValue(node, 'ur0Percent'),
      ZERO_SEQUENCE_MAGNETISING_RATIO,
      0,
      0.9,
      node.study?.tapChanger === 'onLoad',
      false,
      studyValue(node, 'offLoadTapPercent') ?? 0,
    ])
    trafoRowOf.set(node.id, out.trafo.length - 1)
  }

  const frames = Object.fromEntries((Object.keys(TABLES) as TableName[]).map((name) => [name, frame(TABLES[name], rows[name])]))
  return {
    net: {
      _module: 'pandapower.auxiliary',
      _class: 'pandapowerNet',
      _object: {
        ...(frames as Record<TableName, PandasFrameJson>),
        version: '3.0.0',
        format_version: '3.0.0',
        name: options.name ?? '',
        f_hz: options.fHz ?? 50,
        sn_mva: options.snMva ?? 1,
      },
    },
    notes: [...notes].map(([code, v]) => ({ code, ...v })),
    busesByNodeIndex,
  }
}

function frame(spec: TableSpec, data: Cell[][]): PandasFrameJson {
  return {
    _module: 'pandas.core.frame',
    _class: 'DataFrame',
    _object: JSON.stringify({ columns: spec.map(([c]) => c), index: data.map((_, i) => i), data }),
    orient: 'split',
    dtype: Object.fromEntries(spec),
    is_multiindex: false,
    is_multicolumn: false,
  }
}
