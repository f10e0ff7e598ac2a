import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { BASE, electricalSetup, loadNetwork } from './test-support.ts'

// Issue 31: the protection reads take the fault current from the short-circuit study, referred through transformers.
// A grid at 11 kV, an HV breaker CBH, an HV cable to an 11/0.42 kV transformer, the LV board LVB, a breaker CBL feeding
// the MCC through an LV cable, and a breaker OUT on the MCC: devices on both sides of the transformer.
const G_STUDY = { scPowerMaxMva: 250, scPowerMinMva: 150, rxRatio: 0.1 }
const TX_STUDY = { ratedPowerKva: 1000, hvRatedVoltageKv: 11, lvRatedVoltageKv: 0.42, ukPercent: 6, urPercent: 1, rOhmPerKm: 0.2, xOhmPerKm: 0.1 }
const NETWORK = {
  nodes: [
    { id: 'UTIL', name: 'Grid', nodeType: 0, ratedVoltageV: 11_000, study: G_STUDY },
    { id: 'HVB', name: 'HV board', nodeType: 3, ratedVoltageV: 11_000 },
    { id: 'CBH', name: 'HV breaker', nodeType: 5, protectionCurve: 'IEC SI', protectionPickupA: 300, protectionTms: 0.2 },
    { id: 'TX', name: 'TX 11/0.42 kV', nodeType: 2, cableLengthM: 500, study: TX_STUDY },
    { id: 'LVB', name: 'LV board', nodeType: 3, ratedVoltageV: 400 },
    { id: 'CBL', name: 'MCC feeder', nodeType: 5, protectionCurve: 'IEC SI', protectionPickupA: 2000, protectionTms: 0.1 },
    { id: 'MCC', name: 'MCC', nodeType: 4, ratedVoltageV: 400, cableLengthM: 100, study: { rOhmPerKm: 0.1, xOhmPerKm: 0.08 } },
    { id: 'OUT', name: 'Outgoing', nodeType: 5, protectionCurve: 'IEC SI', protectionPickupA: 12_000, protectionTms: 0.05 },
  ],
  edges: [
    { sourceId: 'UTIL', targetId: 'HVB', edgeType: 2 },
    { sourceId: 'HVB', targetId: 'CBH', edgeType: 2 },
    { sourceId: 'CBH', targetId: 'TX', edgeType: 0 },
    { sourceId: 'TX', targetId: 'LVB', edgeType: 3 },
    { sourceId: 'LVB', targetId: 'CBL', edgeType: 2 },
    { sourceId: 'CBL', targetId: 'MCC', edgeType: 0 },
    { sourceId: 'MCC', targetId: 'OUT', edgeType: 2 },
  ],
}

// IEC 60909-0 by hand, radial: Zk = ZQ·t² + Zcable,HV·t² + KT·ZT (+ Zcable,LV), t = 0.42/11 the rated ratio.
type Z = [number, number]
const add = (...zs: Z[]): Z => zs.reduce(([r, x], [a, b]) => [r + a, x + b], [0, 0])
const scale = ([r, x]: Z, k: number): Z => [r * k, x * k]
const abs = ([r, x]: Z) => Math.hypot(r, x)
const mul = ([a, b]: Z, [c, d]: Z): Z => [a * c - b * d, a * d + b * c]
const div = ([a, b]: Z, [c, d]: Z): Z => mul([a, b], [c / (c * c + d * d), -d / (c * c + d * d)])
const parallel = (p: Z, q: Z): Z => div(mul(p, q), add(p, q))
const RELAY = (pickupA: number, tms: number) => ({ protectionCurve: 'IEC SI', protectionPickupA: pickupA, protectionTms: tms })
const RATIO = 0.42 / 11
const zq = (c: number, sMva: number): Z => {
  const x = (c * 11 ** 2) / sMva / Math.sqrt(1 + 0.1 ** 2)
  return [0.1 * x, x]
}
const zBase = 0.42 ** 2 / 1 // UrT² / SrT, ohms at 0.42 kV
const rT = 0.01 * zBase
const xT = Math.sqrt((0.06 * zBase) ** 2 - rT ** 2)
const KT = (0.95 * 1.1) / (1 + (0.6 * xT) / zBase)
const zLvb = (c: number, sMva: number) => add(scale(zq(c, sMva), RATIO ** 2), scale([0.1, 0.05], RATIO ** 2), scale([rT, xT], KT))
const zMcc = (c: number, sMva: number) => add(zLvb(c, sMva), [0.01, 0.008])
const ik = (c: number, z: Z) => (c * 400) / (Math.sqrt(3) * abs(z)) // amperes at 0.4 kV, Z in ohms
const MCC_MAX = ik(1.1, zMcc(1.1, 250))
// The least fault, checked against pickups: line-to-line, I″k2 = c·Un / |Z(1) + Z(2)| with Z(2) = Z(1), minimum case.
const ik2 = (c: number, z: Z) => (c * 400) / (2 * abs(z))
const MCC_MIN = ik2(0.95, zMcc(1.0, 150))
const LVB_MIN = ik2(0.95, zLvb(1.0, 150))
const HVB_MAX = 250_000 / (Math.sqrt(3) * 11) // S″kQ/(√3·Un): the grid's own level at its bus
const iec = (tms: number, current: number, pickup: number) => (tms * 0.14) / ((current / pickup) ** 0.02 - 1)
const close = (actual: number, expected: number, message: string) =>
  assert.ok(Math.abs(actual - expected) <= 1e-6 * Math.abs(expected), `${message}: ${actual} vs ${expected}`)

interface Row {
  deviceId: string
  faultCurrentA: number
  currentRatio: number
  tripTimeS: number | null
  zoneEndBusId: string | null
  zoneEndMinFaultA: number | null
  pickupAboveMinFault: boolean | null
}

/** 400 V grid — 50 m cable — CB1 — MCC (with `source`) — CB2 — 30 m cable — F: the per-device current cases. */
function mccNetwork(source: { id: string; name: string; nodeType: number; study: Record<string, number> }) {
  return {
    nodes: [
      { id: 'UTIL', name: 'Grid', nodeType: 0, ratedVoltageV: 400, study: { scPowerMaxMva: 10, scPowerMinMva: 8, rxRatio: 0.1 } },
      { id: 'CB1', name: 'Incomer', nodeType: 5, cableLengthM: 50, study: { rOhmPerKm: 0.1, xOhmPerKm: 0.08 }, ...RELAY(1000, 0.2) },
      { id: 'MCC', name: 'MCC', nodeType: 4, ratedVoltageV: 400 },
      source,
      { id: 'CB2', name: 'Feeder', nodeType: 5, ...RELAY(400, 0.1) },
      { id: 'F', name: 'Board', nodeType: 3, ratedVoltageV: 400, cableLengthM: 30, study: { rOhmPerKm: 0.2, xOhmPerKm: 0.08 } },
    ],
    edges: [
      { sourceId: 'UTIL', targetId: 'CB1', edgeType: 0 },
      { sourceId: 'CB1', targetId: 'MCC', edgeType: 2 },
      { sourceId: 'MCC', targetId: source.id, edgeType: 2 },
      { sourceId: 'MCC', targetId: 'CB2', edgeType: 2 },
      { sourceId: 'CB2', targetId: 'F', edgeType: 0 },
    ],
  }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: protection from computed fault currents`, () => {
    it('coordination, trip time and curves take I″k from the study, referred through the transformer; pickups above the least fault (line-to-line I″k2 min) at the zone end are flagged', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      await loadNetwork(as, NETWORK)
      // Sanity: the sizes behind the flags below.
      assert.ok(MCC_MIN < 12_000 && MCC_MIN > 2000 && LVB_MIN * RATIO > 300, `${MCC_MIN} ${LVB_MIN * RATIO}`)

      const res = await as('GET', `${BASE}/nodes/OUT/coordination`)
      assert.equal(res.statusCode, 200, res.body)
      const c = res.json() as { rows: Row[] } & Record<string, unknown>
      assert.equal(c.faultCurrentSource, 'shortCircuitStudy')
      assert.equal(c.faultBusId, 'MCC')
      close(c.faultCurrentA as number, MCC_MAX, 'I″k max at the MCC')
      assert.deepEqual(
        c.rows.map((r) => r.deviceId),
        ['OUT', 'CBL', 'CBH'],
      )
      const [cbm, cbl, cbh] = c.rows as [Row, Row, Row]
      assert.equal(cbm.currentRatio, 1)
      assert.equal(cbl.currentRatio, 1)
      close(cbh.currentRatio, RATIO, 'the rated ratio 0.42/11, not the nominal 0.4/11')
      close(cbl.faultCurrentA, MCC_MAX, 'CBL sees the LV fault current')
      close(cbh.faultCurrentA, MCC_MAX * RATIO, 'CBH sees it on the HV side')
      assert.ok(MCC_MAX < 12_000)
      assert.equal(cbm.tripTimeS, null, 'OUT does not trip: its pickup is above even I″k max')
      close(cbl.tripTimeS!, iec(0.1, MCC_MAX, 2000), 'CBL trip time')
      close(cbh.tripTimeS!, iec(0.2, MCC_MAX * RATIO, 300), 'CBH trip time at the referred current')
      // Zones: OUT's ends at the fault (the MCC), CBL's at OUT (the MCC bus), CBH's at CBL (the LV board).
      assert.deepEqual(
        c.rows.map((r) => [r.zoneEndBusId, r.pickupAboveMinFault]),
        [
          ['MCC', true],
          ['MCC', false],
          ['LVB', false],
        ],
      )
      close(cbm.zoneEndMinFaultA!, MCC_MIN, 'I″k2 min at the MCC')
      close(cbl.zoneEndMinFaultA!, MCC_MIN, 'I″k2 min at the MCC for CBL')
      close(cbh.zoneEndMinFaultA!, LVB_MIN * RATIO, 'I″k2 min at the LV board, seen from the HV side')
      assert.equal(c.pickupAboveMinFaultCount, 1)
      assert.deepEqual(c.minimumFaultCheck, { checked: true, detail: null, missing: [] })

      // The study's LV voltage tolerance passes through: +6 % (cmax 1.05) gives the study's own I″k max at the MCC.
      const study6 = (await as('GET', `${BASE}/studies/short-circuit?lvTolerancePercent=6`)).json() as { buses: Array<{ busId: string; ikssMaxKa: number }> }
      const mcc6 = study6.buses.find((b) => b.busId === 'MCC')!.ikssMaxKa * 1000
      assert.ok(mcc6 < MCC_MAX * 0.98, `${mcc6} vs ${MCC_MAX}`)
      close((await as('GET', `${BASE}/nodes/OUT/coordination?lvTolerancePercent=6`)).json().faultCurrentA, mcc6, 'coordination at +6 %')
      close((await as('GET', `${BASE}/nodes/OUT/trip-time?lvTolerancePercent=6`)).json().faultCurrentA, mcc6, 'trip time at +6 %')
      close((await as('GET', `${BASE}/nodes/OUT/protection-curves?lvTolerancePercent=6`)).json().faultCurrentA, mcc6, 'curves at +6 %')
      // So does the minimum case's conductor temperature: the zone-end minimum is the study's own at 80 °C, below 20 °C's.
      const study80 = (await as('GET', `${BASE}/studies/short-circuit?conductorEndTemperatureC=80`)).json() as {
        buses: Array<{ busId: string; ikssTwoPhaseMinKa: number }>
      }
      const mccMin80 = study80.buses.find((b) => b.busId === 'MCC')!.ikssTwoPhaseMinKa * 1000
      assert.ok(mccMin80 < MCC_MIN * 0.999, `${mccMin80} vs ${MCC_MIN}`)
      const hot = (await as('GET', `${BASE}/nodes/OUT/coordination?conductorEndTemperatureC=80`)).json() as { rows: Row[] }
      close(hot.rows[0]!.zoneEndMinFaultA!, mccMin80, 'I″k2 min at the MCC with conductors at 80 °C')
      const seven = await as('GET', `${BASE}/nodes/OUT/coordination?lvTolerancePercent=7`)
      assert.equal(seven.statusCode, 400)
      assert.deepEqual(
        seven.json().errors.map((e: { pointer: string }) => e.pointer),
        ['/lvTolerancePercent'],
      )

      // A typed current wins, and is referred the same way.
      const typed = (await as('GET', `${BASE}/nodes/OUT/coordination?faultCurrentA=5000`)).json() as { rows: Row[] } & Record<string, unknown>
      assert.equal(typed.faultCurrentSource, 'typed')
      assert.equal(typed.faultCurrentA, 5000)
      close(typed.rows[2]!.faultCurrentA, 5000 * RATIO, 'typed, referred to CBH')
      assert.equal(typed.rows[0]!.pickupAboveMinFault, true, 'the check reads the study, whatever the typed current')

      // Trip time at the node's own bus: CBH on the HV board sees the grid's level there.
      const trip = (await as('GET', `${BASE}/nodes/CBH/trip-time`)).json()
      assert.equal(trip.faultCurrentSource, 'shortCircuitStudy')
      assert.equal(trip.faultBusId, 'HVB')
      close(trip.faultCurrentA, HVB_MAX, 'I″k max at the HV board')
      close(trip.tripTimeS, iec(0.2, HVB_MAX, 300), 'CBH trip time at its own bus')
      assert.equal((await as('GET', `${BASE}/nodes/CBH/trip-time?faultCurrentA=600`)).json().faultCurrentA, 600)

      // Curves on one current axis (at the fault): each device at the current it sees.
      const curves = (await as('GET', `${BASE}/nodes/OUT/protection-curves?points=11`)).json()
      close(curves.faultCurrentA, MCC_MAX, 'the mark')
      assert.equal(curves.faultCurrentSource, 'shortCircuitStudy')
      assert.equal(curves.fromA, 2000, "the lowest pickup referred to the fault's side (CBL's 2000 A; CBH's 300 A is 7857 A at the fault)")
      assert.equal(curves.toA, 360_000)
      const hv = curves.devices[2]
      close(hv.currentRatio, RATIO, 'CBH ratio on the curves')
      for (const i of [0, 5, 10]) {
        const seen = curves.currentsA[i] * RATIO
        assert.equal(hv.timesS[i], seen > 300 ? (await as('GET', `${BASE}/nodes/CBH/trip-time?faultCurrentA=${seen}`)).json().tripTimeS : null)
      }
    })

    it('missing study data: the computed current is a 422 naming node and parameter, a typed current still works; a missing transformer ratio is named too', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      await loadNetwork(as, NETWORK)
      assert.equal((await as('PUT', `${BASE}/nodes/UTIL`, { study: { scPowerMaxMva: 250, rxRatio: 0.1 } })).statusCode, 200)
      for (const path of ['nodes/OUT/coordination', 'nodes/CBH/trip-time', 'nodes/OUT/protection-curves']) {
        const res = await as('GET', `${BASE}/${path}`)
        assert.equal(res.statusCode, 422, `${path}: ${res.body}`)
        assert.equal(res.json().code, 'StudyDataMissing')
        assert.deepEqual(
          res.json().missing.map((m: { nodeId: string; parameter: string }) => [m.nodeId, m.parameter]),
          [['UTIL', 'scPowerMinMva']],
        )
      }
      const typed = await as('GET', `${BASE}/nodes/OUT/coordination?faultCurrentA=5000`)
      assert.equal(typed.statusCode, 200, typed.body)
      const c = typed.json() as { rows: Row[]; minimumFaultCheck: { checked: boolean; missing: unknown[] } }
      assert.equal(c.minimumFaultCheck.checked, false)
      assert.deepEqual(c.minimumFaultCheck.missing, [
        { nodeId: 'UTIL', parameter: 'scPowerMinMva', reason: 'network feeder impedance, minimum case (or scCurrentMinKa)' },
      ])
      assert.deepEqual(
        c.rows.map((r) => r.pickupAboveMinFault),
        [null, null, null],
      )
      close(c.rows[2]!.faultCurrentA, 5000 * RATIO, 'still referred')
      assert.equal((await as('GET', `${BASE}/nodes/CBH/trip-time?faultCurrentA=600`)).statusCode, 200)
      assert.equal((await as('GET', `${BASE}/nodes/OUT/protection-curves?faultCurrentA=5000`)).statusCode, 200)

      // The transformer's rated voltages refer the current to CBH: without one, a 422 naming it, typed or not.
      const { lvRatedVoltageKv: _, ...withoutLv } = TX_STUDY
      assert.equal((await as('PUT', `${BASE}/nodes/TX`, { study: withoutLv })).statusCode, 200)
      const referral = await as('GET', `${BASE}/nodes/OUT/coordination?faultCurrentA=5000`)
      assert.equal(referral.statusCode, 422, referral.body)
      assert.deepEqual(
        referral.json().missing.map((m: { nodeId: string; parameter: string }) => [m.nodeId, m.parameter]),
        [['TX', 'lvRatedVoltageKv']],
      )
      assert.equal((await as('GET', `${BASE}/nodes/OUT/trip-time?faultCurrentA=5000`)).statusCode, 200, 'no transformer between OUT and its fault')

      // A node fed only by a UPS: the study has no bus there (it models no UPS), so the current must be typed.
      await loadNetwork(as, {
        nodes: [
          { id: 'UPS', name: 'UPS', nodeType: 13, ratedVoltageV: 400 },
          { id: 'CB', name: 'CB', nodeType: 5, protectionCurve: 'IEC SI', protectionPickupA: 100, protectionTms: 0.1 },
        ],
        edges: [{ sourceId: 'UPS', targetId: 'CB', edgeType: 2 }],
      })
      const ups = await as('GET', `${BASE}/nodes/CB/trip-time`)
      assert.equal(ups.statusCode, 422, ups.body)
      assert.deepEqual(
        ups.json().errors.map((e: { pointer: string }) => e.pointer),
        ['/faultCurrentA'],
      )
      assert.equal((await as('GET', `${BASE}/nodes/CB/trip-time?faultCurrentA=1000`)).statusCode, 200)
    })

    it('each device carries its own branch current: a motor on the MCC feeds a fault past the feeder breaker, so the incomer carries only the grid share (by hand)', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      // 400 V grid — 50 m cable — CB1 — MCC (500 kW motor M) — CB2 — 30 m cable — F; a fault at F.
      const MOTOR = { ratedPowerKw: 500, ratedVoltageKv: 0.4, powerFactor: 0.9, efficiencyPercent: 95, lockedRotorRatio: 7, rxRatio: 0.4 }
      await loadNetwork(as, mccNetwork({ id: 'M', name: 'Motor', nodeType: 8, study: MOTOR }))
      // IEC 60909-0 by hand: ZQ = 1.1·0.4²/10 Ω at R/X 0.1; ZM = (1/7)·UrM²/SrM, SrM = PrM/(η·cos φ), R/X 0.4.
      const xq = (1.1 * 0.16) / 10 / Math.sqrt(1.01)
      const up = add([0.1 * xq, xq], [0.005, 0.004])
      const zm = 0.16 / (7 * (0.5 / (0.95 * 0.9)))
      const xm = zm / Math.sqrt(1 + 0.4 ** 2)
      const motor: Z = [0.4 * xm, xm]
      const atF = add(parallel(up, motor), [0.006, 0.0024])
      const faultA = ik(1.1, atF)
      // The incomer carries the grid's share only: the current divider ZM / (Zup + ZM).
      const gridShare = abs(div(motor, add(up, motor)))
      const res = await as('GET', `${BASE}/nodes/F/coordination`)
      assert.equal(res.statusCode, 200, res.body)
      const c = res.json() as { faultCurrentA: number; rows: Row[] }
      close(c.faultCurrentA, faultA, 'I″k max at F')
      const [cb2, cb1] = c.rows as [Row, Row]
      assert.deepEqual([cb2.deviceId, cb1.deviceId], ['CB2', 'CB1'])
      close(cb2.faultCurrentA, faultA, 'CB2 carries the whole fault current')
      close(cb1.faultCurrentA, faultA * gridShare, 'CB1 carries the grid share')
      close(cb1.currentRatio, gridShare, 'CB1 current ratio')
      assert.ok(gridShare < 0.85, `the motor's share is visible: ${gridShare}`)
      close(cb1.tripTimeS!, iec(0.2, faultA * gridShare, 1000), 'CB1 trips at the current it carries')
      const curves = (await as('GET', `${BASE}/nodes/F/protection-curves`)).json() as { devices: Array<{ deviceId: string; currentRatio: number }> }
      close(curves.devices.find((d) => d.deviceId === 'CB1')!.currentRatio, gridShare, 'the TCC plot refers CB1 the same way')
      // A typed current has no fault state: every device on this path sees it whole.
      const typed = (await as('GET', `${BASE}/nodes/F/coordination?faultCurrentA=5000`)).json() as { rows: Row[] }
      assert.deepEqual(
        typed.rows.map((r) => r.faultCurrentA),
        [5000, 5000],
      )
    })

    it('a device whose fault side is a long chain of busbar links carries its own current too (the walk of 20 000 links overflowed the call stack, and the device took the whole current)', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      // 400 V grid — 50 m cable — CB1 — MCC — CB2 — F — X1 — … — X20000 — M (500 kW motor): all one bus past the cable.
      const MOTOR = { ratedPowerKw: 500, ratedVoltageKv: 0.4, powerFactor: 0.9, efficiencyPercent: 95, lockedRotorRatio: 7, rxRatio: 0.4 }
      const links = 20_000
      const x = (i: number) => `X${String(i).padStart(5, '0')}`
      const { nodes } = mccNetwork({ id: 'M', name: 'Motor', nodeType: 8, study: MOTOR })
      await loadNetwork(as, {
        nodes: [
          ...nodes.filter((n) => n.id !== 'F'),
          { id: 'F', name: 'Board', nodeType: 3, ratedVoltageV: 400 },
          ...Array.from({ length: links }, (_, i) => ({ id: x(i + 1), name: `Link ${i + 1}`, nodeType: 3, ratedVoltageV: 400 })),
        ],
        edges: [
          { sourceId: 'UTIL', targetId: 'CB1', edgeType: 0 },
          { sourceId: 'CB1', targetId: 'MCC', edgeType: 2 },
          { sourceId: 'MCC', targetId: 'CB2', edgeType: 2 },
          { sourceId: 'CB2', targetId: 'F', edgeType: 2 },
          { sourceId: 'F', targetId: x(1), edgeType: 2 },
          ...Array.from({ length: links - 1 }, (_, i) => ({ sourceId: x(i + 1), targetId: x(i + 2), edgeType: 2 })),
          { sourceId: x(links), targetId: 'M', edgeType: 2 },
        ],
      })
      // One bus from CB1 on: a fault at F is fed by the grid through the cable and by the motor past both breakers.
      const xq = (1.1 * 0.16) / 10 / Math.sqrt(1.01)
      const up = add([0.1 * xq, xq], [0.005, 0.004])
      const zm = 0.16 / (7 * (0.5 / (0.95 * 0.9)))
      const xm = zm / Math.sqrt(1 + 0.4 ** 2)
      const motor: Z = [0.4 * xm, xm]
      const faultA = ik(1.1, parallel(up, motor))
      const gridShare = abs(div(motor, add(up, motor)))
      const res = await as('GET', `${BASE}/nodes/F/coordination`)
      assert.equal(res.statusCode, 200, res.body.slice(0, 1000))
      const c = res.json() as { faultCurrentA: number; rows: Row[] }
      close(c.faultCurrentA, faultA, 'I″k max at F')
      const [cb2, cb1] = c.rows as [Row, Row]
      assert.deepEqual([cb2.deviceId, cb1.deviceId], ['CB2', 'CB1'])
      close(cb1.currentRatio, gridShare, 'CB1 carries the grid share')
      close(cb2.currentRatio, gridShare, 'CB2 carries the grid share: the motor feeds F from its fault side')
    })

    it("each device's least fault at the end of its zone is its own branch current: a generator on the MCC feeds a minimum fault there past the incomer (by hand)", async (t) => {
      const { as } = await electricalSetup(t, dialect)
      // 400 V grid — 50 m cable — CB1 — MCC (500 kVA generator SG) — CB2 — 30 m cable — F. CB1's zone ends at CB2 (the MCC).
      const GEN = { ratedPowerKva: 500, ratedVoltageKv: 0.4, xdSubtransientPercent: 15, rxRatio: 0.15, powerFactor: 0.8 }
      await loadNetwork(as, mccNetwork({ id: 'SG', name: 'Generator', nodeType: 1, study: GEN }))
      // Minimum case by hand: ZQmin = 0.95·0.4²/8 Ω at R/X 0.1; ZGK = KG·(0.15 + j)·X″d, KG = 1.1/(1 + 0.15·0.6).
      const xq = (0.95 * 0.16) / 8 / Math.sqrt(1.01)
      const up = add([0.1 * xq, xq], [0.005, 0.004])
      const xd = (0.15 * 0.16) / 0.5
      const gen = scale([0.15 * xd, xd], 1.1 / (1 + 0.15 * 0.6))
      const mccMin = ik2(0.95, parallel(up, gen))
      const gridShare = abs(div(gen, add(up, gen)))
      const res = await as('GET', `${BASE}/nodes/F/coordination?supplyId=UTIL`)
      assert.equal(res.statusCode, 200, res.body)
      const [, cb1] = (res.json() as { rows: Row[] }).rows as [Row, Row]
      assert.equal(cb1.deviceId, 'CB1')
      assert.equal(cb1.zoneEndBusId, 'MCC')
      close(cb1.zoneEndMinFaultA!, mccMin * gridShare, "CB1's least fault at the MCC is the grid's share of I″k2 min")
      assert.ok(gridShare < 0.8, `the generator's share is visible: ${gridShare}`)
    })
  })
}
