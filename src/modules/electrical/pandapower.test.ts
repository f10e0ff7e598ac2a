import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { EdgeType as E, NodeType as N } from './codes.ts'
import { toPandapowerNet } from './pandapower.ts'
import type { PandasFrameJson } from './pandapower.ts'
import { buildGraph } from './topology.ts'
import type { ElectricalEdge, ElectricalNode } from './topology.ts'

type Row = Record<string, unknown>

/** Reads a frame the way pandas `read_json(orient="split")` would: columns × data rows. */
function rowsOf(frame: PandasFrameJson): Row[] {
  const split = JSON.parse(frame._object) as { columns: string[]; index: number[]; data: unknown[][] }
  assert.deepEqual(Object.keys(frame.dtype), split.columns)
  assert.deepEqual(
    split.index,
    split.data.map((_, i) => i),
  )
  return split.data.map((values) => {
    assert.equal(values.length, split.columns.length)
    return Object.fromEntries(split.columns.map((c, i) => [c, values[i]]))
  })
}

const edge = (sourceId: string, targetId: string, edgeType: number = E.Cable): ElectricalEdge => ({ sourceId, targetId, edgeType })

// 33 kV grid → 5 MVA 33/6.6 kV → switchboard → breaker → 500 kW motor; switchboard → breaker → 1 MVA 6.6/0.415 kV
// → MCC → fuse-switch → 55 kW motor.
const nodes: ElectricalNode[] = [
  { id: 'GRID', nodeType: N.UtilitySupply, ratedVoltageV: 33000 },
  { id: 'TX1', nodeType: N.PowerTransformer, ratedPowerKw: 5000, cableLengthM: 200 },
  { id: 'SWB1', nodeType: N.Switchboard, ratedVoltageV: 6600 },
  { id: 'CB1', nodeType: N.CircuitBreaker, ratedCurrentA: 630 },
  { id: 'M1', nodeType: N.Motor, ratedVoltageV: 6600, ratedPowerKw: 500, cableLengthM: 120 },
  { id: 'CB2', nodeType: N.CircuitBreaker },
  { id: 'TX2', nodeType: N.PowerTransformer, ratedPowerKw: 1000, cableLengthM: 80 },
  { id: 'MCC1', nodeType: N.MotorControlCentre, ratedVoltageV: 415 },
  { id: 'FS1', nodeType: N.FuseSwitch },
  { id: 'M2', nodeType: N.Motor, ratedVoltageV: 415, ratedPowerKw: 55, cableLengthM: 40 },
]
const edges = [
  edge('GRID', 'TX1'),
  edge('TX1', 'SWB1', E.TransformerWinding),
  edge('SWB1', 'CB1', E.BusbarLink),
  edge('CB1', 'M1'),
  edge('SWB1', 'CB2', E.BusbarLink),
  edge('CB2', 'TX2'),
  edge('TX2', 'MCC1', E.TransformerWinding),
  edge('MCC1', 'FS1', E.BusbarLink),
  edge('FS1', 'M2'),
]

describe('pandapower export of a radial plant feeder', () => {
  const { net, notes, busesByNodeIndex } = toPandapowerNet(buildGraph(nodes, edges), { name: 'Pit 3' })
  const tables = net._object

  it('writes the pandapowerNet envelope with split-orient DataFrames', () => {
    assert.equal(net._module, 'pandapower.auxiliary')
    assert.equal(net._class, 'pandapowerNet')
    assert.equal(tables.bus._class, 'DataFrame')
    assert.equal(tables.bus.orient, 'split')
    assert.equal(tables.format_version, '3.0.0')
    assert.equal(tables.name, 'Pit 3')
    assert.ok(!/NaN|Infinity/.test(JSON.stringify(net)))
  })

  it('makes one bus per node, two per two-terminal device, merging busbar links and winding connections', () => {
    assert.deepEqual(
      rowsOf(tables.bus).map((b) => [b.name, b.vn_kv, b.type]),
      [
        ['GRID', 33, 'b'],
        ['TX1/1', 33, 'n'],
        ['SWB1', 6.6, 'b'],
        ['CB1/2', 6.6, 'n'],
        ['M1', 6.6, 'n'],
        ['CB2/2', 6.6, 'n'],
        ['TX2/1', 6.6, 'n'],
        ['MCC1', 0.415, 'b'],
        ['FS1/2', 0.415, 'n'],
        ['M2', 0.415, 'n'],
      ],
    )
    assert.deepEqual(busesByNodeIndex[1], [1, 2]) // TX1
    assert.deepEqual(busesByNodeIndex[2], [2]) // SWB1
  })

  it('puts the grid infeed as ext_grid and motors as motor on their buses', () => {
    assert.deepEqual(
      rowsOf(tables.ext_grid).map((r) => [r.name, r.bus, r.vm_pu]),
      [['GRID', 0, 1]],
    )
    assert.deepEqual(
      rowsOf(tables.motor).map((r) => [r.name, r.bus, r.pn_mech_mw, r.vn_kv]),
      [
        ['M1', 4, 0.5, 6.6],
        ['M2', 9, 0.055, 0.415],
      ],
    )
  })

  it('connects transformers HV to LV by bus voltage with IEC 60076-5 impedances', () => {
    assert.deepEqual(
      rowsOf(tables.trafo).map((r) => [r.name, r.hv_bus, r.lv_bus, r.sn_mva, r.vn_hv_kv, r.vn_lv_kv, r.vk_percent]),
      [
        ['TX1', 1, 2, 5, 33, 6.6, 7],
        ['TX2', 6, 7, 1, 6.6, 0.415, 5],
      ],
    )
  })

  it('turns breakers and fuse-switches into closed bus-bus switches', () => {
    assert.deepEqual(
      rowsOf(tables.switch).map((r) => [r.name, r.bus, r.element, r.et, r.type, r.closed, r.in_ka]),
      [
        ['CB1', 2, 3, 'b', 'CB', true, 0.63],
        ['CB2', 2, 5, 'b', 'CB', true, null],
        ['FS1', 7, 8, 'b', 'LBS', true, null],
      ],
    )
  })

  it('turns cables into lines with the fed node length and a standard type for the voltage', () => {
    assert.deepEqual(
      rowsOf(tables.line).map((r) => [r.from_bus, r.to_bus, r.length_km, r.std_type]),
      [
        [0, 1, 0.2, 'NA2XS2Y 1x185 RM/25 12/20 kV'],
        [3, 4, 0.12, 'NA2XS2Y 1x185 RM/25 6/10 kV'],
        [5, 6, 0.08, 'NA2XS2Y 1x185 RM/25 6/10 kV'],
        [8, 9, 0.04, 'NAYY 4x150 SE'],
      ],
    )
  })

  it('needs no approximation note when every rating is present', () => {
    assert.deepEqual(notes, [])
  })
})

describe('pandapower export notes and islands', () => {
  it('makes an island generator the slack and notes missing lengths, ratings and voltages', () => {
    const graph = buildGraph(
      [
        { id: 'GEN', nodeType: N.Generator, ratedVoltageV: 415, ratedPowerKw: 200 },
        { id: 'DB', nodeType: N.Switchboard },
        { id: 'L', nodeType: N.FeederLoad },
        { id: 'C', nodeType: N.CapacitorBank, ratedVoltageV: 415, ratedPowerKw: 50 },
        { id: 'X', nodeType: N.FeederLoad },
      ],
      [edge('GEN', 'DB', E.BusbarLink), edge('DB', 'L'), edge('DB', 'C', E.BusbarLink)],
    )
    const { net, notes } = toPandapowerNet(graph)
    assert.deepEqual(
      rowsOf(net._object.gen).map((r) => [r.name, r.p_mw, r.slack]),
      [['GEN', 0.2, true]],
    )
    assert.deepEqual(
      rowsOf(net._object.shunt).map((r) => [r.name, r.q_mvar, r.vn_kv]),
      [['C', -0.05, 0.415]],
    )
    assert.deepEqual(
      rowsOf(net._object.load).map((r) => [r.name, r.p_mw]),
      [
        ['L', 0],
        ['X', 0],
      ],
    )
    const byCode = Object.fromEntries(notes.map((n) => [n.code, n.nodeIds]))
    assert.deepEqual(byCode.CableLengthMissing, ['L'])
    assert.deepEqual(byCode.RatingMissing, ['L', 'X'])
    assert.deepEqual(byCode.IslandWithoutSupply, ['X'])
    assert.deepEqual(byCode.BusVoltageUnknown, ['X'])
  })
})

describe('pandapower export of the study parameters', () => {
  const fixture = JSON.parse(readFileSync(new URL('../../../test/fixtures/electrical/short-circuit-pandapower.json', import.meta.url), 'utf8')) as {
    cases: Array<{ network: { nodes: ElectricalNode[]; edges: ElectricalEdge[] } }>
  }
  const graphOf = ({ nodes, edges }: { nodes: ElectricalNode[]; edges: ElectricalEdge[] }) =>
    buildGraph(
      [...nodes].sort((a, b) => (a.id < b.id ? -1 : 1)),
      [...edges].sort((a, b) => (a.sourceId + '\u0000' + a.targetId < b.sourceId + '\u0000' + b.targetId ? -1 : 1)),
    )

  it('carries the grid, cable and motor parameters the short-circuit study reads (the pandapower motor case)', () => {
    const { net } = toPandapowerNet(graphOf(fixture.cases[1]!.network))
    assert.deepEqual(
      rowsOf(net._object.ext_grid).map((r) => [r.name, r.s_sc_max_mva, r.s_sc_min_mva, r.rx_max, r.rx_min]),
      [['B1', 10, 8, 0.1, 0.1]],
    )
    assert.deepEqual(
      rowsOf(net._object.line).map((r) => [r.name, r.std_type, r.length_km, r.r_ohm_per_km, r.x_ohm_per_km, r.c_nf_per_km]),
      [
        ['B1>B2', null, 1, 0.32, 0.07, 0],
        ['B2>B3', null, 2, 0.32, 0.07, 0],
      ],
    )
    assert.deepEqual(
      rowsOf(net._object.motor).map((r) => [r.name, r.pn_mech_mw, r.cos_phi_n, r.efficiency_n_percent, r.lrc_pu, r.vn_kv, r.rx]),
      [['M', 0.5, 0.9, 95, 7, 0.45, 0.4]],
    )
  })

  it("carries the transformer's rating, windings, ukr, uRr and vector group without its phase-shift number (the pandapower transformer case)", () => {
    const { net, notes } = toPandapowerNet(graphOf(fixture.cases[0]!.network))
    assert.deepEqual(
      rowsOf(net._object.trafo).map((r) => [r.name, r.sn_mva, r.vn_hv_kv, r.vn_lv_kv, r.vk_percent, r.vkr_percent, r.vector_group]),
      [
        ['T1', 0.4, 11, 0.42, 6, 0.5, 'Dyn'],
        ['T2', 0.4, 11, 0.42, 6, 0.5, 'Dyn'],
      ],
    )
    assert.deepEqual(notes, [])
  })

  it('carries the zero-sequence parameters of the earth faults under pandapower names (the pandapower 1ph case)', () => {
    const earth = JSON.parse(readFileSync(new URL('../../../test/fixtures/electrical/earth-fault-pandapower.json', import.meta.url), 'utf8')) as typeof fixture
    const { net } = toPandapowerNet(graphOf(earth.cases[0]!.network))
    assert.deepEqual(
      rowsOf(net._object.ext_grid).map((r) => [r.name, r.x0x_max, r.x0x_min, r.r0x0_max, r.r0x0_min]),
      [['B1', 1, 1, 0.4, 0.4]],
    )
    assert.deepEqual(
      rowsOf(net._object.line).map((r) => [r.name, r.r0_ohm_per_km, r.x0_ohm_per_km, r.c0_nf_per_km]),
      [
        ['B2>B3', 0.244, 0.336, 2000],
        ['B3>B4', 0.244, 0.336, 2000],
      ],
    )
    assert.deepEqual(
      rowsOf(net._object.trafo).map((r) => [r.name, r.vector_group, r.vk0_percent, r.vkr0_percent, r.mag0_percent, r.mag0_rx, r.si0_hv_partial]),
      [
        ['T1', 'Dyn', 5, 0.4, 1e9, 0, 0.9],
        ['T2', 'Dyn', 5, 0.4, 1e9, 0, 0.9],
      ],
    )
  })

  it('writes three-winding transformers as trafo3w and power station units as gen.power_station_trafo with the trafo oltc and pt_percent (the IEC TR 60909-4 network)', () => {
    const iec = JSON.parse(readFileSync(new URL('../../../test/fixtures/electrical/iec-60909-4.json', import.meta.url), 'utf8')) as (typeof fixture.cases)[0]
    const { net } = toPandapowerNet(graphOf(iec.network))
    const busNames = rowsOf(net._object.bus).map((r) => r.name)
    assert.deepEqual(
      rowsOf(net._object.trafo3w).map((r) => [
        r.name,
        busNames[r.hv_bus as number],
        busNames[r.mv_bus as number],
        busNames[r.lv_bus as number],
        r.sn_hv_mva,
        r.sn_mv_mva,
        r.sn_lv_mva,
        r.vn_hv_kv,
        r.vn_mv_kv,
        r.vn_lv_kv,
        r.vk_hv_percent,
        r.vk_mv_percent,
        r.vk_lv_percent,
        r.vkr_hv_percent,
        r.vkr_mv_percent,
        r.vkr_lv_percent,
        r.vector_group,
      ]),
      [
        // pandapower's vk_hv is HV–MV, vk_mv MV–LV, vk_lv HV–LV (the example's 21 %, 7 %, 10 %).
        ['T3', 'B1', 'B2', 'H', 350, 350, 50, 400, 120, 30, 21, 7, 10, 0.26, 0.16, 0.16, 'YNyd'],
        ['T4', 'B1', 'B2', 'B8', 350, 350, 50, 400, 120, 30, 21, 7, 10, 0.26, 0.16, 0.16, 'Yynd'],
        ['T5', 'B5', 'B6', 'T5LV', 31.5, 31.5, 31.5, 115, 10.5, 10.5, 12, 12, 12, 0.5, 0.5, 0.5, 'Yyd'],
        ['T6', 'B5', 'B6', 'T6LV', 31.5, 31.5, 31.5, 115, 10.5, 10.5, 12, 12, 12, 0.5, 0.5, 0.5, 'Yynd'],
      ],
    )
    const trafos = rowsOf(net._object.trafo)
    assert.deepEqual(
      trafos.map((r) => [r.name, r.oltc, r.power_station_unit, r.pt_percent]),
      [
        ['T1', true, true, 0],
        ['T2', false, true, 0],
      ],
    )
    assert.deepEqual(
      rowsOf(net._object.gen).map((r) => [r.name, r.power_station_trafo === null ? null : trafos[r.power_station_trafo as number]!.name, r.pg_percent]),
      [
        ['G1', 'T1', 0],
        ['G2', 'T2', 7.5],
        ['G3', null, 0],
      ],
    )
  })
})
