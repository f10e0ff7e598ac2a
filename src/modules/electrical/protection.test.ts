import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { EdgeType as E, NodeType as N } from './codes.ts'
import {
  ACCEPTED_CURVE_NAMES,
  InvalidProtectionInput,
  UnknownProtectionCurve,
  checkCoordination,
  devicesOnSupplyPath,
  faultLevelsAlong,
  minimumFaultChecks,
  pathCurrentRatios,
  resolveCurve,
  tripTime,
} from './protection.ts'
import { buildGraph, findSupplyPaths } from './topology.ts'

// Expected times are written out from the standard formulas, never taken from the code under test.
const close = (actual: number | null, expected: number, tolerance = 1e-9): void => {
  assert.ok(actual !== null && Math.abs(actual - expected) <= tolerance, `expected ${expected}, got ${actual}`)
}

describe('trip times per curve', () => {
  it('IEC Standard Inverse, TMS 0.1, 10 × pickup: 0.1·0.14/(10^0.02 − 1) ≈ 0.297 s', () => {
    const outcome = tripTime({ curve: 'IEC SI', pickupA: 100, tms: 0.1 }, 1000)
    close(outcome.tripTimeS, (0.1 * 0.14) / (Math.pow(10, 0.02) - 1))
    close(outcome.tripTimeS, 0.297, 5e-4)
    assert.equal(outcome.multiple, 10)
  })

  it('IEC Very Inverse, TMS 0.5, 5 × pickup: 0.5·13.5/(5 − 1) = 1.6875 s', () => {
    close(tripTime({ curve: 'IEC-VI', pickupA: 200, tms: 0.5 }, 1000).tripTimeS, 1.6875)
  })

  it('IEC Extremely Inverse, TMS 0.2, 4 × pickup: 0.2·80/(16 − 1) s', () => {
    close(tripTime({ curve: 'iec extremely inverse', pickupA: 50, tms: 0.2 }, 200).tripTimeS, (0.2 * 80) / 15)
  })

  it('IEC Long-Time Inverse, TMS 1, 3 × pickup: 120/(3 − 1) = 60 s', () => {
    close(tripTime({ curve: 'IEC Long-Time Inverse', pickupA: 10, tms: 1 }, 30).tripTimeS, 60)
  })

  it('IEEE Moderately Inverse, TD 1, 5 × pickup: 0.0515/(5^0.02 − 1) + 0.114 s', () => {
    close(tripTime({ curve: 'IEEE-MI', pickupA: 100, tms: 1 }, 500).tripTimeS, 0.0515 / (Math.pow(5, 0.02) - 1) + 0.114)
  })

  it('IEEE Very Inverse, TD 2, 3 × pickup: 2·(19.61/8 + 0.491) = 5.8845 s', () => {
    close(tripTime({ curve: 'ieee_vi', pickupA: 100, tms: 2 }, 300).tripTimeS, 5.8845)
  })

  it('IEEE Extremely Inverse, TD 0.5, 10 × pickup: 0.5·(28.2/99 + 0.1217) s', () => {
    close(tripTime({ curve: 'IEEE Extremely Inverse', pickupA: 100, tms: 0.5 }, 1000).tripTimeS, 0.5 * (28.2 / 99 + 0.1217))
  })

  it('definite time trips after the TMS field read as seconds once above pickup', () => {
    close(tripTime({ curve: 'DT', pickupA: 100, tms: 0.25 }, 150).tripTimeS, 0.25)
  })

  it('trips with a finite time just above pickup, where pow(M, 0.02) − 1 would cancel', () => {
    const outcome = tripTime({ curve: 'IEC SI', pickupA: 100, tms: 0.1 }, 100 * (1 + 1e-12))
    assert.equal(outcome.trips, true)
    assert.ok(Number.isFinite(outcome.tripTimeS))
  })
})

describe('no trip and invalid settings', () => {
  it('does not trip at or below pickup and says so without Infinity in JSON', () => {
    for (const current of [100, 99, 0]) {
      const outcome = tripTime({ curve: 'IEC SI', pickupA: 100, tms: 0.1 }, current)
      assert.equal(outcome.trips, false)
      assert.equal(outcome.tripTimeS, null)
      assert.ok(!JSON.stringify(outcome).includes('Infinity'))
    }
  })

  it('rejects pickup or TMS that are zero, negative, NaN or infinite, naming the field', () => {
    const bad = [0, -1, Number.NaN, Number.POSITIVE_INFINITY]
    for (const value of bad) {
      for (const field of ['pickupA', 'tms'] as const) {
        const setting = { curve: 'IEC SI', pickupA: 100, tms: 0.1, [field]: value }
        assert.throws(
          () => tripTime(setting, 1000),
          (err: unknown) => err instanceof InvalidProtectionInput && err.code === 'ValidationFailed' && err.errors?.[0]?.pointer === `/${field}`,
        )
      }
    }
    assert.throws(
      () => tripTime({ curve: 'IEC SI', pickupA: 100, tms: 0.1 }, -5),
      (err: unknown) => err instanceof InvalidProtectionInput && err.field === 'faultCurrentA',
    )
  })
})

describe('curve names', () => {
  it('accepts case, hyphen, underscore and spacing variants of each documented name', () => {
    assert.equal(resolveCurve('iec-si'), 'IEC_SI')
    assert.equal(resolveCurve('  IEC   Standard   Inverse '), 'IEC_SI')
    assert.equal(resolveCurve('IEC_NORMAL_INVERSE'), 'IEC_SI')
    assert.equal(resolveCurve('IEEE-VI'), 'IEEE_VI')
    assert.equal(resolveCurve('ieee moderately inverse'), 'IEEE_MI')
    assert.equal(resolveCurve('Definite Time'), 'DT')
  })

  it('rejects an ambiguous or unknown name with an error listing the accepted names', () => {
    for (const name of ['Very Inverse', 'SI', 'CO-8']) {
      assert.throws(
        () => resolveCurve(name),
        (err: unknown) => {
          assert.ok(err instanceof UnknownProtectionCurve)
          assert.equal(err.code, 'ValidationFailed')
          assert.equal(err.errors?.[0]?.pointer, '/protectionCurve')
          assert.deepEqual(err.extensions?.acceptedCurveNames, ACCEPTED_CURVE_NAMES)
          for (const accepted of ACCEPTED_CURVE_NAMES) assert.ok(err.message.includes(accepted))
          return true
        },
      )
    }
  })
})

describe('coordination along a supply path', () => {
  // Fault 2000 A. Feeder 200 A/0.05 (10×), incomer 400 A/0.1 (5×), upstream 500 A/0.3 (4×), all IEC SI.
  const feeder = { id: 'CB-FDR', curve: 'IEC SI', pickupA: 200, tms: 0.05 }
  const incomer = { id: 'CB-INC', curve: 'IEC SI', pickupA: 400, tms: 0.1 }
  const upstream = { id: 'CB-UP', curve: 'IEC SI', pickupA: 500, tms: 0.3 }
  const tFeeder = (0.05 * 0.14) / (Math.pow(10, 0.02) - 1)
  const tIncomer = (0.1 * 0.14) / (Math.pow(5, 0.02) - 1)
  const tUpstream = (0.3 * 0.14) / (Math.pow(4, 0.02) - 1)

  it('flags the feeder whose margin to the incomer is under 0.3 s and passes the rest', () => {
    const report = checkCoordination([feeder, incomer, upstream], 2000)
    assert.deepEqual(
      report.rows.map((r) => [r.deviceId, r.status, r.upstreamDeviceId]),
      [
        ['CB-FDR', 'Violation', 'CB-INC'],
        ['CB-INC', 'OK', 'CB-UP'],
        ['CB-UP', 'OK', null],
      ],
    )
    close(report.rows[0]!.tripTimeS, tFeeder)
    close(report.rows[0]!.marginS, tIncomer - tFeeder)
    close(report.rows[1]!.marginS, tUpstream - tIncomer)
    assert.equal(report.rows[2]!.marginS, null)
    assert.deepEqual(
      report.rows.map((r) => r.multiple),
      [10, 5, 4],
    )
    assert.equal(report.isCoordinated, false)
    assert.equal(report.violationCount, 1)
    assert.equal(report.clearingDeviceId, 'CB-FDR')
  })

  it('passes the same path with a configured 0.25 s grading margin', () => {
    assert.equal(checkCoordination([feeder, incomer, upstream], 2000, { gradingMarginS: 0.25 }).isCoordinated, true)
  })

  it('marks devices that do not pick up as NotTripping rather than violations', () => {
    const report = checkCoordination([feeder, incomer, upstream], 300)
    assert.deepEqual(
      report.rows.map((r) => [r.status, r.tripTimeS === null]),
      [
        ['OK', false],
        ['NotTripping', true],
        ['NotTripping', true],
      ],
    )
    assert.equal(report.isCoordinated, true)
  })

  it('counts a margin equal to the setting as met despite floating-point rounding', () => {
    const report = checkCoordination(
      [
        { id: 'a', curve: 'DT', pickupA: 10, tms: 0.4 },
        { id: 'b', curve: 'DT', pickupA: 10, tms: 0.7 },
      ],
      100,
    )
    assert.ok(report.rows[0]!.marginS! < 0.3) // 0.7 − 0.4 = 0.29999999999999993
    assert.equal(report.rows[0]!.status, 'OK')
  })

  it('uses a device-specific current, e.g. the HV side of a transformer', () => {
    const report = checkCoordination([feeder, { ...incomer, faultCurrentA: 4000 }], 2000)
    assert.equal(report.rows[1]!.multiple, 10)
  })

  it('collects the relays met on the path from a motor to the grid, skipping a node with an incomplete setting', () => {
    const graph = buildGraph(
      [
        { id: 'GRID', nodeType: N.UtilitySupply },
        { id: 'CB-INC', nodeType: N.CircuitBreaker, protectionCurve: 'IEC SI', protectionPickupA: 400, protectionTms: 0.1 },
        { id: 'SWB', nodeType: N.Switchboard },
        { id: 'CB-FDR', nodeType: N.CircuitBreaker, protectionCurve: 'IEC-SI', protectionPickupA: 200, protectionTms: null },
        { id: 'CB-M', nodeType: N.CircuitBreaker, protectionCurve: 'iec si', protectionPickupA: 200, protectionTms: 0.05 },
        { id: 'M', nodeType: N.Motor },
      ],
      [
        { sourceId: 'GRID', targetId: 'CB-INC', edgeType: E.Cable },
        { sourceId: 'CB-INC', targetId: 'SWB', edgeType: E.BusbarLink },
        { sourceId: 'SWB', targetId: 'CB-FDR', edgeType: E.BusbarLink },
        { sourceId: 'CB-FDR', targetId: 'CB-M', edgeType: E.Cable },
        { sourceId: 'CB-M', targetId: 'M', edgeType: E.Cable },
      ],
    )
    const path = findSupplyPaths(graph, 'M').paths[0]!
    const { devices, skipped } = devicesOnSupplyPath(graph, path)
    assert.deepEqual(
      devices.map((d) => d.id),
      ['CB-M', 'CB-INC'],
    )
    assert.deepEqual(skipped, [{ nodeId: 'CB-FDR', reason: 'protectionTms is not a finite number > 0' }])
    assert.deepEqual(
      checkCoordination(devices, 2000).rows.map((r) => r.status),
      ['Violation', 'OK'],
    )
  })
})

describe('fault currents referred along a supply path (issue 31)', () => {
  // 33 kV grid → T1 33/11 kV → 11 kV board → T2 11/0.42 kV → LV board → generator breaker → 400 V generator.
  const tx = (id: string, hv: number, lv: number) => ({ id, nodeType: N.PowerTransformer, study: { hvRatedVoltageKv: hv, lvRatedVoltageKv: lv } })
  const nodes = [
    { id: 'G33', nodeType: N.UtilitySupply, ratedVoltageV: 33_000 },
    tx('T1', 33, 11),
    { id: 'B11', nodeType: N.Switchboard, ratedVoltageV: 11_000 },
    tx('T2', 11, 0.42),
    { id: 'LV', nodeType: N.Switchboard, ratedVoltageV: 400 },
    { id: 'CBG', nodeType: N.CircuitBreaker },
    { id: 'GEN', nodeType: N.Generator, ratedVoltageV: 400 },
  ]
  const edges = [
    { sourceId: 'G33', targetId: 'T1', edgeType: E.TransformerWinding },
    { sourceId: 'T1', targetId: 'B11', edgeType: E.TransformerWinding },
    { sourceId: 'B11', targetId: 'T2', edgeType: E.TransformerWinding },
    { sourceId: 'T2', targetId: 'LV', edgeType: E.TransformerWinding },
    { sourceId: 'LV', targetId: 'CBG', edgeType: E.BusbarLink },
    { sourceId: 'CBG', targetId: 'GEN', edgeType: E.Cable },
  ]
  const graph = buildGraph(nodes, edges)
  const pathTo = (from: string, supply: string) => findSupplyPaths(graph, from).paths.find((p) => p.supplyId === supply)!

  it('an LV fault is referred up through both transformers by their rated ratios, a transformer node on its supply side', () => {
    const path = pathTo('LV', 'G33')
    assert.deepEqual(path.nodeIds, ['LV', 'T2', 'B11', 'T1', 'G33'])
    const { ratios, missing } = pathCurrentRatios(graph, path, 4)
    assert.deepEqual(missing, [])
    for (const [k, expected] of [1, 0.42 / 11, 0.42 / 11, (0.42 / 11) * (11 / 33), (0.42 / 11) * (11 / 33)].entries()) close(ratios[k]!, expected, 1e-15)
  })

  it('an HV fault fed from the LV side: the LV devices see the current times UrHV/UrLV', () => {
    const path = pathTo('B11', 'GEN')
    assert.deepEqual(path.nodeIds, ['B11', 'T2', 'LV', 'CBG', 'GEN'])
    const { ratios } = pathCurrentRatios(graph, path, 3)
    close(ratios[3]!, 11 / 0.42, 1e-12)
    assert.ok(Number.isNaN(ratios[4]!), 'past the last device asked for: not computed')
  })

  it('through a three-winding transformer: the ratio of the winding towards the fault to the winding towards the supply', () => {
    const study = { hvRatedVoltageKv: 132, mvRatedVoltageKv: 33, lvRatedVoltageKv: 11, hvNodeId: 'G132', mvNodeId: 'B33', lvNodeId: 'B11' }
    const three = buildGraph(
      [
        { id: 'B11', nodeType: N.Switchboard, ratedVoltageV: 11_000 },
        { id: 'B33', nodeType: N.Switchboard, ratedVoltageV: 33_000 },
        { id: 'G132', nodeType: N.UtilitySupply, ratedVoltageV: 132_000 },
        { id: 'T', nodeType: N.PowerTransformer, study },
      ],
      [
        { sourceId: 'G132', targetId: 'T', edgeType: E.TransformerWinding },
        { sourceId: 'T', targetId: 'B33', edgeType: E.TransformerWinding },
        { sourceId: 'T', targetId: 'B11', edgeType: E.TransformerWinding },
      ],
    )
    const fromMv = findSupplyPaths(three, 'B33').paths[0]!
    assert.deepEqual(fromMv.nodeIds, ['B33', 'T', 'G132'])
    close(pathCurrentRatios(three, fromMv, 2).ratios[2]!, 33 / 132, 1e-15)
    const fromLv = findSupplyPaths(three, 'B11').paths[0]!
    close(pathCurrentRatios(three, fromLv, 2).ratios[2]!, 11 / 132, 1e-15)
    const unnamed = buildGraph(
      three.nodes.map((n) => (n.id === 'T' ? { ...n, study: { ...study, lvNodeId: 'X' } } : n)),
      [
        { sourceId: 'G132', targetId: 'T', edgeType: E.TransformerWinding },
        { sourceId: 'T', targetId: 'B33', edgeType: E.TransformerWinding },
        { sourceId: 'T', targetId: 'B11', edgeType: E.TransformerWinding },
      ],
    )
    const { ratios, missing } = pathCurrentRatios(unnamed, findSupplyPaths(unnamed, 'B11').paths[0]!, 2)
    assert.ok(Number.isNaN(ratios[2]!))
    assert.deepEqual(
      missing.map((m) => [m.nodeId, m.parameter]),
      [['T', 'lvNodeId']],
    )
  })

  it("names the ratings the referral lacks, and the fault's nominal voltage when nothing gives it", () => {
    const bare = buildGraph(
      [{ id: 'X', nodeType: N.Switchboard }, { id: 'T', nodeType: N.PowerTransformer, study: { hvRatedVoltageKv: 11 } }, ...nodes.slice(0, 1)],
      [
        { sourceId: 'X', targetId: 'T', edgeType: E.TransformerWinding },
        { sourceId: 'T', targetId: 'G33', edgeType: E.TransformerWinding },
      ],
    )
    const { missing } = pathCurrentRatios(bare, findSupplyPaths(bare, 'X').paths[0]!, 2)
    assert.deepEqual(
      missing.map((m) => [m.nodeId, m.parameter]),
      [
        ['X', 'ratedVoltageV'],
        ['T', 'lvRatedVoltageKv'],
      ],
    )
    assert.deepEqual(pathCurrentRatios(bare, findSupplyPaths(bare, 'X').paths[0]!, 0).missing, [], 'no device beyond the transformer: nothing needed')
  })

  it('a fault at a transformer node is on its supply side; each zone ends at the next device towards the fault', () => {
    const levels = new Map([
      ['B11', { busId: 'B11', ikssMaxKa: 10, ikssMinKa: 8 / (Math.sqrt(3) / 2), ikssTwoPhaseMinKa: 8 }],
      ['LV', { busId: 'LV', ikssMaxKa: 30, ikssMinKa: 20 / (Math.sqrt(3) / 2), ikssTwoPhaseMinKa: 20 }],
      ['G33', { busId: 'G33', ikssMaxKa: 5, ikssMinKa: 4 / (Math.sqrt(3) / 2), ikssTwoPhaseMinKa: 4 }],
    ])
    const fromT2 = pathTo('T2', 'G33')
    assert.deepEqual(
      faultLevelsAlong(graph, fromT2, (id) => levels.get(id)).map((l) => l?.busId ?? null),
      ['B11', 'B11', 'G33', 'G33'],
    )
    // Devices at LV (index 0), T2 (1) and T1 (3) of the LV fault's path; ratios as above.
    const path = pathTo('LV', 'G33')
    const { ratios } = pathCurrentRatios(graph, path, 4)
    const along = faultLevelsAlong(graph, path, (id) => levels.get(id))
    const checks = minimumFaultChecks([0, 1, 3], [25_000, 700, 200], ratios, along, [null, null, null])
    assert.deepEqual(
      checks.map((c) => [c.zoneEndBusId, c.pickupAboveMinFault]),
      [
        ['LV', true],
        ['LV', false],
        ['B11', false],
      ],
    )
    close(checks[1]!.zoneEndMinFaultA!, 20_000 * (0.42 / 11), 1e-9)
    // T1's zone ends at T2, a fault at T2 is on its supply side (the 11 kV board): 8 kA referred by 11/33.
    close(checks[2]!.zoneEndMinFaultA!, 8000 * (11 / 33), 1e-9)
  })
})
