import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { BASE, electricalSetup, loadNetwork as load, RADIAL } from './test-support.ts'

// IEC 60255-151 t = TMS·k/(M^α − 1); IEEE C37.112 t = TD·(A/(M^p − 1) + B), evaluated the plain way.
const iec = (tms: number, k: number, alpha: number, m: number) => (tms * k) / (Math.pow(m, alpha) - 1)
const ieee = (td: number, a: number, b: number, p: number, m: number) => td * (a / (Math.pow(m, p) - 1) + b)
const close = (actual: number, expected: number, message: string) =>
  assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.max(1, expected), `${message}: ${actual} vs ${expected}`)

for (const dialect of testDialects()) {
  describe(`${dialect}: electrical protection and export`, () => {
    it('trip time matches the curve formulas computed by hand (IEC SI/VI/EI, IEEE VI, DT)', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      const nodes = [
        { id: 'SI', protectionCurve: 'IEC SI', protectionPickupA: 100, protectionTms: 0.1 },
        { id: 'VI', protectionCurve: 'IEC VI', protectionPickupA: 100, protectionTms: 0.2 },
        { id: 'EI', protectionCurve: 'IEC EI', protectionPickupA: 100, protectionTms: 0.5 },
        { id: 'UVI', protectionCurve: 'IEEE VI', protectionPickupA: 200, protectionTms: 2 },
        { id: 'DT', protectionCurve: 'DT', protectionPickupA: 100, protectionTms: 0.4 },
      ]
      await load(as, { nodes: nodes.map((n) => ({ ...n, name: n.id, nodeType: 5 })), edges: [] })
      const ask = async (id: string, amps: number) => {
        const res = await as('GET', `${BASE}/nodes/${id}/trip-time?faultCurrentA=${amps}`)
        assert.equal(res.statusCode, 200, res.body)
        return res.json()
      }
      const si = await ask('SI', 1000)
      assert.equal(si.curve, 'IEC_SI')
      assert.equal(si.multiple, 10)
      close(si.tripTimeS, iec(0.1, 0.14, 0.02, 10), 'IEC SI at 10×')
      assert.ok(Math.abs(si.tripTimeS - 0.2971) < 0.0001, 'the textbook 2.971 s at TMS 1, 10× scaled by 0.1')
      assert.match(si.formula, /0\.14/)
      close((await ask('VI', 300)).tripTimeS, 1.35, 'IEC VI: 0.2·13.5/(3 − 1)')
      close((await ask('EI', 500)).tripTimeS, 40 / 24, 'IEC EI: 0.5·80/(25 − 1)')
      close((await ask('UVI', 1000)).tripTimeS, ieee(2, 19.61, 0.491, 2, 5), 'IEEE VI: 2·(19.61/24 + 0.491)')
      close((await ask('UVI', 1000)).tripTimeS, 2.6161666666666665, 'IEEE VI by hand')
      close((await ask('DT', 150)).tripTimeS, 0.4, 'DT: the delay once above pickup')
      for (const id of ['SI', 'DT']) {
        const at = await ask(id, 100)
        assert.equal(at.trips, false, `${id} at pickup does not trip`)
        assert.equal(at.tripTimeS, null)
      }
      assert.equal((await ask('SI', 0)).trips, false)
    })

    it('trip time: 422 for a node without usable settings or (no typed current) study data, 400 for a negative fault current, 404 for no node', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      await load(as, RADIAL)
      const none = await as('GET', `${BASE}/nodes/MSB/trip-time?faultCurrentA=1000`)
      assert.equal(none.statusCode, 422)
      assert.match(none.json().detail, /not set/)
      const partial = await as('GET', `${BASE}/nodes/TX/trip-time?faultCurrentA=1000`)
      assert.equal(partial.statusCode, 422)
      assert.match(partial.json().detail, /protectionPickupA/)
      await as('PUT', `${BASE}/nodes/CB2`, { protectionPickupA: 0 })
      assert.equal((await as('GET', `${BASE}/nodes/CB2/trip-time?faultCurrentA=1000`)).statusCode, 422, 'a pickup of 0 is stored but unusable')
      const computed = await as('GET', `${BASE}/nodes/CB1/trip-time`)
      assert.equal(computed.statusCode, 422, 'no typed current: the short-circuit study, which lacks data here')
      assert.equal(computed.json().code, 'StudyDataMissing')
      assert.equal((await as('GET', `${BASE}/nodes/CB1/trip-time?faultCurrentA=-1`)).statusCode, 400)
      assert.equal((await as('GET', `${BASE}/nodes/CB1/trip-time?faultCurrentA=abc`)).statusCode, 400)
      // A number past the largest double reads as Infinity: the 400 names the query parameter, where it was sent.
      for (const url of [
        `${BASE}/nodes/CB1/trip-time?faultCurrentA=1e309`,
        `${BASE}/nodes/CB1/trip-time?faultCurrentA=Infinity`,
        `${BASE}/nodes/M1/coordination?faultCurrentA=1e309`,
      ]) {
        const res = await as('GET', url)
        assert.equal(res.statusCode, 400, url)
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
        assert.deepEqual(
          res.json().errors.map((e: { in: string; pointer: string }) => [e.in, e.pointer]),
          [['query', '/faultCurrentA']],
          url,
        )
      }
      assert.equal((await as('GET', `${BASE}/nodes/NOPE/trip-time?faultCurrentA=1`)).statusCode, 404)
    })

    it('coordination along the supply path: the table with trip times, margins and status; a tighter margin is a violation', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      await load(as, RADIAL)
      const res = await as('GET', `${BASE}/nodes/M1/coordination?faultCurrentA=2000`)
      assert.equal(res.statusCode, 200, res.body)
      const report = res.json()
      const t2 = iec(0.1, 0.14, 0.02, 20)
      const t1 = iec(0.3, 0.14, 0.02, 5)
      assert.equal(report.supplyId, 'G')
      assert.deepEqual(report.pathNodeIds, ['M1', 'CB2', 'MCC', 'CB1', 'MSB', 'TX', 'G'])
      assert.equal(report.gradingMarginS, 0.3)
      assert.deepEqual(
        report.rows.map((r: { deviceId: string; upstreamDeviceId: string | null; status: string }) => [r.deviceId, r.upstreamDeviceId, r.status]),
        [
          ['CB2', 'CB1', 'OK'],
          ['CB1', null, 'OK'],
        ],
      )
      close(report.rows[0].tripTimeS, t2, 'CB2 at 20×')
      close(report.rows[1].tripTimeS, t1, 'CB1 at 5×')
      close(report.rows[0].marginS, t1 - t2, 'margin')
      assert.equal(report.isCoordinated, true)
      assert.equal(report.clearingDeviceId, 'CB2')
      assert.deepEqual(report.skipped, [{ nodeId: 'TX', reason: 'protectionPickupA is not a finite number > 0' }])
      const tight = (await as('GET', `${BASE}/nodes/M1/coordination?faultCurrentA=2000&gradingMarginS=1.1`)).json()
      assert.equal(tight.isCoordinated, false)
      assert.equal(tight.violationCount, 1)
      assert.equal(tight.rows[0].status, 'Violation')
      const low = (await as('GET', `${BASE}/nodes/M1/coordination?faultCurrentA=300`)).json()
      assert.deepEqual(
        low.rows.map((r: { status: string }) => r.status),
        ['OK', 'NotTripping'],
        'CB1 does not see 300 A as a fault',
      )
      assert.equal((await as('GET', `${BASE}/nodes/ISO/coordination?faultCurrentA=2000`)).statusCode, 422, 'no supply, no path')
      assert.equal((await as('GET', `${BASE}/nodes/M1/coordination?faultCurrentA=2000&supplyId=ISO`)).statusCode, 422)
      assert.equal((await as('GET', `${BASE}/nodes/M1/coordination?faultCurrentA=2000&supplyId=G`)).statusCode, 200)
      assert.equal((await as('GET', `${BASE}/nodes/M1/coordination?faultCurrentA=2000&gradingMarginS=-0.1`)).statusCode, 400)
      assert.equal((await as('GET', `${BASE}/nodes/M1/coordination?faultCurrentA=2000&gradingMarginS=10.01`)).statusCode, 400)
      assert.equal((await as('GET', `${BASE}/nodes/M1/coordination?faultCurrentA=2000&gradingMarginS=0`)).statusCode, 200)
    })

    it("protection curves: the path's devices sampled at shared log-spaced currents, each time the trip-time read's own; a bad query is a 400 naming the field", async (t) => {
      const { as } = await electricalSetup(t, dialect)
      await load(as, RADIAL)
      const res = await as('GET', `${BASE}/nodes/M1/protection-curves?points=21&faultCurrentA=2000`)
      assert.equal(res.statusCode, 200, res.body)
      const curves = res.json()
      assert.equal(curves.supplyId, 'G')
      assert.deepEqual(curves.pathNodeIds, ['M1', 'CB2', 'MCC', 'CB1', 'MSB', 'TX', 'G'])
      assert.deepEqual(
        curves.devices.map((d: { deviceId: string; curve: string }) => [d.deviceId, d.curve]),
        [
          ['CB2', 'IEC_SI'],
          ['CB1', 'IEC_SI'],
        ],
      )
      assert.deepEqual(curves.skipped, [{ nodeId: 'TX', reason: 'protectionPickupA is not a finite number > 0' }])
      // Default range: the lowest pickup (CB2 100 A) to 30 × the highest (CB1 400 A), log-spaced, both ends included.
      assert.equal(curves.fromA, 100)
      assert.equal(curves.toA, 12_000)
      assert.equal(curves.currentsA.length, 21)
      assert.equal(curves.currentsA[0], 100)
      assert.equal(curves.currentsA[20], 12_000)
      close(curves.currentsA[10], Math.sqrt(100 * 12_000), 'the middle sample is the geometric mean')
      for (const d of curves.devices) assert.equal(d.timesS.length, 21)
      // At or below pickup: no trip (null); CB1 (400 A) does not trip at the first samples.
      assert.equal(curves.devices[0].timesS[0], null, 'CB2 at exactly its pickup')
      assert.equal(curves.devices[1].timesS[5], null, `CB1 at ${curves.currentsA[5]} A`)
      // A few samples against the trip-time read and the IEC formula by hand.
      for (const i of [3, 10, 20]) {
        for (const [index, id, tms, pickup] of [
          [0, 'CB2', 0.1, 100],
          [1, 'CB1', 0.3, 400],
        ] as const) {
          const current = curves.currentsA[i]
          const trip = (await as('GET', `${BASE}/nodes/${id}/trip-time?faultCurrentA=${current}`)).json()
          assert.equal(curves.devices[index].timesS[i], trip.tripTimeS, `${id} at ${current} A: the trip-time read's value`)
          if (current > pickup) close(curves.devices[index].timesS[i], iec(tms, 0.14, 0.02, current / pickup), `${id} at ${current} A by hand`)
        }
      }
      // An explicit range and the nearest supply named.
      const ranged = (await as('GET', `${BASE}/nodes/M1/protection-curves?fromA=200&toA=2000&points=2&supplyId=G&faultCurrentA=2000`)).json()
      assert.deepEqual(ranged.currentsA, [200, 2000])
      close(ranged.devices[1].timesS[1], iec(0.3, 0.14, 0.02, 5), 'CB1 at 2000 A')
      // A range wider than a double's ratio (the smallest positive current up to 1e9 A): every current sampled, none NaN.
      const widest = await as('GET', `${BASE}/nodes/M1/protection-curves?fromA=5e-324&toA=1e9&points=500&supplyId=G&faultCurrentA=2000`)
      assert.equal(widest.statusCode, 200, widest.body.slice(0, 300))
      const currents = widest.json().currentsA as number[]
      assert.deepEqual([currents.length, currents[0], currents[499]], [500, 5e-324, 1e9])
      for (let i = 1; i < currents.length; i++) assert.ok(currents[i]! > currents[i - 1]!, `currentsA[${i}] = ${currents[i]}`)

      const problem = async (query: string, pointer: string, status = 400) => {
        const bad = await as('GET', `${BASE}/nodes/M1/protection-curves?faultCurrentA=2000&${query}`)
        assert.equal(bad.statusCode, status, `${query}: ${bad.body}`)
        if (status === 400) {
          assert.equal(bad.json().code, 'ValidationFailed')
          assert.deepEqual(
            bad.json().errors.map((e: { pointer: string }) => e.pointer),
            [pointer],
            query,
          )
        }
      }
      await problem('fromA=2000&toA=1000', '/toA')
      await problem('fromA=20000', '/toA')
      await problem('points=1', '/points')
      await problem('points=501', '/points')
      await problem('fromA=0', '/fromA')
      await problem('toA=abc', '/toA')
      await problem('supplyId=ISO', '', 422)
      const emptyRange = await as('GET', `${BASE}/nodes/M1/protection-curves?fromA=2000&toA=1000`)
      assert.equal(emptyRange.statusCode, 400, `an empty range is refused before the study the fault current would need: ${emptyRange.body}`)
      assert.deepEqual(
        emptyRange.json().errors?.map((e: { pointer: string }) => e.pointer),
        ['/toA'],
      )
      assert.equal((await as('GET', `${BASE}/nodes/ISO/protection-curves`)).statusCode, 422, 'no supply, no path')
      assert.equal((await as('GET', `${BASE}/nodes/NOPE/protection-curves`)).statusCode, 404)
    })

    it('pandapower export: the file itself by default, with notes in the envelope', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      await load(as, RADIAL)
      const res = await as('GET', `${BASE}/export/pandapower?fHz=60`)
      assert.equal(res.statusCode, 200, res.body.slice(0, 300))
      assert.match(String(res.headers['content-disposition']), /S1-pandapower\.json/)
      const net = res.json()
      assert.equal(net._class, 'pandapowerNet')
      assert.equal(net._object.f_hz, 60)
      assert.equal(net._object.name, 'S1')
      const buses = JSON.parse(net._object.bus._object) as { data: unknown[][] }
      assert.ok(buses.data.length > 0)
      const trafo = JSON.parse(net._object.trafo._object) as { data: unknown[][] }
      assert.equal(trafo.data.length, 1, 'TX becomes one transformer')
      const envelope = (await as('GET', `${BASE}/export/pandapower?envelope=true`)).json()
      assert.equal(envelope.net._class, 'pandapowerNet')
      assert.ok(Array.isArray(envelope.notes))
      assert.equal((await as('GET', `${BASE}/export/pandapower?fHz=55`)).statusCode, 400)
      assert.equal((await as('GET', `${BASE}/export/pandapower?snMva=0`)).statusCode, 400)
    })
  })
}
