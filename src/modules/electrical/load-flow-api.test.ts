import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { connectDatabase } from '../../db/connect.ts'
import { withOrgScope } from '../../db/tenant-scope.ts'
import type { OrgId } from '../../ids.ts'
import { sleep, testDialects } from '../../../test/harness.ts'
import { createSitesService } from '../sites/service.ts'
import { createElectricalService } from './service.ts'
import { solveLoadFlow } from './studies/load-flow.ts'
import type { LoadFlowCase } from './studies/load-flow-case.ts'
import { matpowerCase } from './studies/load-flow-matpower.ts'
import type { LoadFlowStudy } from './studies/load-flow-study.ts'
import { BASE, electricalSetup, loadNetwork } from './test-support.ts'

const CASE33 = matpowerCase('case33bw.m', true)
const KV33 = 12.66

/**
 * Baran & Wu's feeder (MATPOWER case33bw) as a site network: bus n a Switchboard `B<n>` (bus 1 the UtilitySupply),
 * its load a FeederLoad `L<n>` on a busbar link, each in-service branch a 1 km Cable into `B<to>` carrying the branch's
 * Ω as Ω/km. `closeTies`: the five normally open ties too, each a Cable into a node `T<from>_<to>` on `B<to>`'s bus.
 */
function feeder33(closeTies: boolean) {
  const nodes: object[] = []
  const edges: object[] = []
  const circuit = (row: number[]) => ({ ratedVoltageV: KV33 * 1000, cableLengthM: 1000, study: { rOhmPerKm: row[2]!, xOhmPerKm: row[3]! } })
  const fedBy = new Map(CASE33.branchRows.filter((r) => r[10] === 1).map((r) => [r[1]!, r]))
  for (const [bus, , pKw, qKvar] of CASE33.busRows as Array<[number, number, number, number]>) {
    if (bus === 1) nodes.push({ id: 'B1', name: 'Substation', nodeType: 0, ratedVoltageV: KV33 * 1000 })
    else nodes.push({ id: `B${bus}`, name: `Bus ${bus}`, nodeType: 3, ...circuit(fedBy.get(bus)!) })
    if (pKw === 0) continue
    nodes.push({ id: `L${bus}`, name: `Load ${bus}`, nodeType: 10, study: { activePowerKw: pKw, powerFactor: pKw / Math.hypot(pKw, qKvar) } })
    edges.push({ sourceId: `B${bus}`, targetId: `L${bus}`, edgeType: 2 })
  }
  for (const row of CASE33.branchRows) {
    const [from, to] = [row[0]!, row[1]!]
    if (row[10] === 1) edges.push({ sourceId: `B${from}`, targetId: `B${to}`, edgeType: 0 })
    else if (closeTies) {
      nodes.push({ id: `T${from}_${to}`, name: `Tie ${from}-${to}`, nodeType: 3, ...circuit(row) })
      edges.push({ sourceId: `B${from}`, targetId: `T${from}_${to}`, edgeType: 0 }, { sourceId: `T${from}_${to}`, targetId: `B${to}`, edgeType: 2 })
    }
  }
  return { nodes, edges }
}

/** A plant: 11 kV grid, 1 MVA 11/0.42 kV transformer, 400 V board with a cabled load, a motor, a capacitor, a generator, a UPS; a dead island. */
const PLANT_STUDY = {
  TX: { ratedPowerKva: 1000, hvRatedVoltageKv: 11, lvRatedVoltageKv: 0.42, ukPercent: 6, urPercent: 1 },
  L1: { activePowerKw: 100, powerFactor: 0.9, ampacityA: 250 },
  M1: { ratedPowerKw: 55, powerFactor: 0.85, efficiencyPercent: 94 },
  GEN: { activePowerKw: 50, voltageSetpointPu: 1 },
}
function plant(study: Record<string, object> = PLANT_STUDY, extra: Record<string, object> = {}) {
  return {
    nodes: [
      { id: 'G', name: 'Grid', nodeType: 0, ratedVoltageV: 11000 },
      { id: 'TX', name: 'TX', nodeType: 2, study: study.TX },
      { id: 'MSB', name: 'Main board', nodeType: 3, ratedVoltageV: 400 },
      { id: 'L1', name: 'Feeder', nodeType: 10, cableLengthM: 50, cableSize: '4C 95mm² Cu XLPE', study: study.L1, ...extra.L1 },
      { id: 'M1', name: 'Pump', nodeType: 8, study: study.M1 },
      { id: 'GEN', name: 'Diesel', nodeType: 1, study: study.GEN },
      { id: 'C1', name: 'PFC', nodeType: 11, ratedVoltageV: 400, ratedPowerKw: 50, ...extra.C1 },
      { id: 'UPS', name: 'UPS', nodeType: 13 },
      { id: 'ISO', name: 'Spare board', nodeType: 3 },
      { id: 'L9', name: 'Spare load', nodeType: 10 },
    ],
    edges: [
      { sourceId: 'G', targetId: 'TX', edgeType: 3 },
      { sourceId: 'TX', targetId: 'MSB', edgeType: 3 },
      { sourceId: 'MSB', targetId: 'L1', edgeType: 0 },
      { sourceId: 'MSB', targetId: 'M1', edgeType: 2 },
      { sourceId: 'GEN', targetId: 'MSB', edgeType: 2 },
      { sourceId: 'MSB', targetId: 'C1', edgeType: 2 },
      { sourceId: 'MSB', targetId: 'UPS', edgeType: 2 },
      { sourceId: 'ISO', targetId: 'L9', edgeType: 0 },
    ],
  }
}

const within = (actual: number, expected: number, relative: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= relative * Math.abs(expected), `${what}: expected ${expected} ± ${relative * 100} %, got ${actual}`)
const busOf = (study: LoadFlowStudy, busId: string) => study.buses.find((b) => b.busId === busId)!
const busWith = (study: LoadFlowStudy, nodeId: string) => study.buses.find((b) => b.nodeIds.includes(nodeId))!
const branchOf = (study: LoadFlowStudy, nodeId: string) => study.branches.find((b) => b.nodeId === nodeId)!

for (const dialect of testDialects()) {
  describe(`${dialect}: the load-flow study`, () => {
    it('Baran & Wu 33-bus feeder built through the API: published losses and lowest voltage within 1 %; its five ties closed (meshed) as the solver answers the meshed case; another organisation’s site a 404', async (t) => {
      const { h, as, asMember } = await electricalSetup(t, dialect)
      await loadNetwork(as, feeder33(false))
      const res = await asMember('GET', `${BASE}/studies/load-flow`)
      assert.equal(res.statusCode, 200, res.body)
      const radial = res.json() as LoadFlowStudy
      assert.equal(radial.converged, true)
      assert.equal(radial.buses.length, 33)
      assert.equal(radial.branches.length, 32)
      within(radial.lossKw, 202.67, 0.01, 'P losses, kW')
      within(radial.lossKvar, 135.14, 0.01, 'Q losses, kvar')
      const lowest = radial.buses.reduce((a, b) => (b.voltagePu < a.voltagePu ? b : a))
      assert.equal(lowest.busId, 'B18')
      within(lowest.voltagePu, 0.9131, 0.01, '|V| at bus 18')
      assert.ok(Math.abs(lowest.voltageV - lowest.voltagePu * 12660) < 1e-6, `voltageV ${lowest.voltageV}`)
      within(busOf(radial, 'B1').pGenKw, 3715 + radial.lossKw, 1e-9, 'substation P')
      assert.deepEqual(radial.assumed.sources, [{ nodeId: 'B1', busKind: 'slack', voltageSetpointPu: 1, setpointGiven: false }])

      await loadNetwork(as, feeder33(true))
      const meshed = (await as('GET', `${BASE}/studies/load-flow`)).json() as LoadFlowStudy
      assert.equal(meshed.converged, true)
      assert.equal(meshed.branches.length, 37)
      const zBaseOhm = KV33 ** 2 / CASE33.study.baseMva
      const ties = CASE33.branchRows.filter((r) => r[10] === 0)
      const reference: LoadFlowCase = {
        ...CASE33.study,
        branches: [
          ...CASE33.study.branches,
          ...ties.map((r) => ({ id: `tie ${r[0]}-${r[1]}`, fromBusId: String(r[0]), toBusId: String(r[1]), rPu: r[2]! / zBaseOhm, xPu: r[3]! / zBaseOhm })),
        ],
      }
      const solved = solveLoadFlow(reference)
      assert.ok(solved.converged, 'the reference case converges')
      for (const bus of solved.buses) {
        const answered = busOf(meshed, `B${bus.id}`)
        assert.ok(Math.abs(answered.voltagePu - bus.vPu) < 1e-7 && Math.abs(answered.angleDeg - bus.angleDeg) < 1e-5, `bus ${bus.id}`)
      }
      within(meshed.lossKw, solved.lossMw * 1000, 1e-6, 'meshed losses')
      assert.ok(meshed.lossKw < 0.7 * radial.lossKw, 'closing the ties lowers the losses')
      assert.equal((await as('GET', '/api/sites/NOPE/electrical/studies/load-flow')).statusCode, 404)
      const stranger = await h.orgWithKey('admin')
      const foreign = await h.inject({ org: stranger.org, apiKey: stranger.key }, { method: 'GET', url: `${BASE}/studies/load-flow` })
      assert.equal(foreign.statusCode, 404, "another organisation's site reads as the uniform 404")
      assert.equal(foreign.json().code, 'NotFound')
    })

    it('missing data: a 422 StudyDataMissing naming each node and parameter of the supplied part (not of the dead island); supplied, a 200', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      const TX = { ...PLANT_STUDY.TX, ukPercent: undefined }
      await loadNetwork(
        as,
        plant(
          { TX, L1: { activePowerKw: 100 }, M1: { ratedPowerKw: 55, powerFactor: 0.85 }, GEN: { voltageSetpointPu: 1 } },
          { L1: { cableSize: null }, C1: { ratedPowerKw: null } },
        ),
      )
      const res = await as('GET', `${BASE}/studies/load-flow`)
      assert.equal(res.statusCode, 422, res.body)
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
      const problem = res.json() as { code: string; missing: Array<{ nodeId: string; parameter: string }>; missingCount: number }
      assert.equal(problem.code, 'StudyDataMissing')
      assert.deepEqual(problem.missing.map((m) => `${m.nodeId}.${m.parameter}`).sort(), [
        'C1.ratedPowerKw',
        'GEN.activePowerKw',
        'L1.powerFactor',
        'L1.rOhmPerKm',
        'L1.xOhmPerKm',
        'M1.efficiencyPercent',
        'TX.ukPercent',
      ])
      assert.equal(problem.missingCount, 7)
      await loadNetwork(as, plant())
      assert.equal((await as('GET', `${BASE}/studies/load-flow`)).statusCode, 200)
    })

    it('an unknown query parameter is a 400 naming it (the load flow takes none), as on the other studies; the OpenAPI document lists the 400', async (t) => {
      const { h, as } = await electricalSetup(t, dialect)
      await loadNetwork(as, plant())
      const res = await as('GET', `${BASE}/studies/load-flow?busId=MSB`)
      assert.equal(res.statusCode, 400, res.body)
      assert.equal(res.json().code, 'ValidationFailed')
      assert.deepEqual(res.json().errors, [{ in: 'query', pointer: '/busId', message: 'is not a known property' }])
      assert.equal((await as('GET', `${BASE}/studies/load-flow`)).statusCode, 200)
      const doc = (await h.inject(undefined, { method: 'GET', url: '/openapi.json' })).json()
      assert.ok(doc.paths['/api/sites/{siteId}/electrical/studies/load-flow'].get.responses['400'], 'the 400 documented')
    })

    it('the load-flow parameters: voltageSetpointPu (0.8 to 1.2) on a supply or generator, activePowerKw on a generator, ampacityA on any node; else a 400 naming them', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      await loadNetwork(as, plant())
      const pointerOf = async (url: string, body: object) => {
        const res = await as('PUT', url, body)
        return res.statusCode === 200 ? 200 : (res.json() as { errors: Array<{ pointer: string }> }).errors.map((e) => `${res.statusCode} ${e.pointer}`)
      }
      assert.equal(await pointerOf(`${BASE}/nodes/G`, { study: { voltageSetpointPu: 1.05 } }), 200)
      assert.equal(await pointerOf(`${BASE}/nodes/GEN`, { study: { activePowerKw: 80, voltageSetpointPu: 0.8, ampacityA: 300 } }), 200)
      assert.equal(await pointerOf(`${BASE}/nodes/MSB`, { study: { ampacityA: 1600 } }), 200)
      assert.deepEqual(await pointerOf(`${BASE}/nodes/G`, { study: { voltageSetpointPu: 1.25 } }), ['400 /study/voltageSetpointPu'])
      assert.deepEqual(await pointerOf(`${BASE}/nodes/G`, { study: { voltageSetpointPu: 0.5 } }), ['400 /study/voltageSetpointPu'])
      assert.deepEqual(await pointerOf(`${BASE}/nodes/M1`, { study: { voltageSetpointPu: 1 } }), ['400 /study/voltageSetpointPu'])
      assert.deepEqual(await pointerOf(`${BASE}/nodes/G`, { study: { activePowerKw: 10 } }), ['400 /study/activePowerKw'])
      assert.deepEqual(await pointerOf(`${BASE}/nodes/L1`, { study: { ampacityA: 0 } }), ['400 /study/ampacityA'])
      const study = (await as('GET', `${BASE}/studies/load-flow`)).json() as LoadFlowStudy
      assert.deepEqual(
        study.assumed.sources.map((s) => [s.nodeId, s.voltageSetpointPu, s.setpointGiven]),
        [
          ['G', 1.05, true],
          ['GEN', 0.8, true],
        ],
      )
      assert.ok(
        Math.abs(busOf(study, 'G').voltagePu - 1.05) < 1e-12 && Math.abs(busWith(study, 'MSB').voltagePu - 0.8) < 1e-9,
        `${busOf(study, 'G').voltagePu} ${busWith(study, 'MSB').voltagePu}`,
      )
    })

    it('a plant: transformer at its rated ratio, cable from the cable table with its ampacity, motor, capacitor, PV generator, idle UPS; flows balance', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      await loadNetwork(as, plant())
      const study = (await as('GET', `${BASE}/studies/load-flow`)).json() as LoadFlowStudy
      assert.equal(study.converged, true)
      assert.deepEqual(study.unsuppliedBusIds, ['ISO', 'L9'])
      assert.deepEqual(study.assumed.notModelled, [{ nodeId: 'UPS', reason: 'UPS / battery: assumed idle (no power exchanged)' }])
      assert.deepEqual(study.assumed.cablesFromSize, [{ nodeId: 'L1', cableSize: '4C 95mm² Cu XLPE', rOhmPerKm: 0.193, xOhmPerKm: 0.08 }])
      assert.deepEqual(
        study.assumed.sources.map((s) => [s.nodeId, s.busKind, s.voltageSetpointPu, s.setpointGiven]),
        [
          ['G', 'slack', 1, false],
          ['GEN', 'pv', 1, true],
        ],
      )
      const msb = busWith(study, 'MSB')
      assert.deepEqual(msb.nodeIds, ['C1', 'GEN', 'M1', 'MSB', 'UPS'])
      assert.equal(msb.busKind, 'pv')
      assert.ok(Math.abs(msb.voltagePu - 1) < 1e-9, 'the generator holds its set-point')
      within(msb.pLoadKw, 55 / 0.94, 1e-12, 'motor demand = P / η')
      within(msb.qLoadKvar, (55 / 0.94) * Math.tan(Math.acos(0.85)), 1e-9, 'motor Q')
      within(msb.pGenKw, 50, 1e-12, 'generator P')
      // The capacitor's 50 kvar at 1 pu and the generator's Q make up the bus's reactive balance.
      const l1 = branchOf(study, 'L1')
      const tx = branchOf(study, 'TX')
      assert.equal(tx.fromBusId, 'G')
      const l1Bus = busOf(study, 'L1')
      within(-l1.pToKw, 100, 1e-9, 'the load draws its activePowerKw')
      within(-l1.qToKvar, 100 * Math.tan(Math.acos(0.9)), 1e-9, 'at its power factor')
      within(l1.currentToA, (1000 * (100 / 0.9)) / (Math.sqrt(3) * l1Bus.voltageV), 1e-9, 'load current')
      within(l1.lossKw, (3 * l1.currentToA ** 2 * 0.193 * 0.05) / 1000, 1e-6, 'cable I²R at 0.193 Ω/km × 50 m')
      within(l1.loadingPercent!, (100 * Math.max(l1.currentFromA, l1.currentToA)) / 250, 1e-12, 'cable loading against ampacityA')
      within(tx.loadingPercent!, (100 * Math.sqrt(3) * Math.max(tx.currentFromA * 11, tx.currentToA * 0.42)) / 1000, 1e-12, 'transformer loading')
      within(busOf(study, 'G').pGenKw, 100 + 55 / 0.94 - 50 + study.lossKw, 1e-9, 'the grid supplies demand − generation + losses')
      within(study.lossKw, l1.lossKw + tx.lossKw, 1e-12, 'total losses')

      // Unloaded, the transformer's LV side sits at its rated ratio: 420 V on a 400 V bus.
      await loadNetwork(as, { nodes: plant().nodes.slice(0, 3), edges: plant().edges.slice(0, 2) })
      const idle = (await as('GET', `${BASE}/studies/load-flow`)).json() as LoadFlowStudy
      assert.ok(
        Math.abs(busOf(idle, 'MSB').voltagePu - 1.05) < 1e-9 && Math.abs(busOf(idle, 'MSB').voltageV - 420) < 1e-6,
        `LV side at ${busOf(idle, 'MSB').voltageV} V`,
      )
      assert.ok(Math.abs(idle.lossKw) < 1e-12, 'no current, no loss')
    })

    it('a case with no solution (10 MW over 1 km of 1 Ω/km at 400 V): a 200 with converged false, a note naming the reason and bus, no values', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      await loadNetwork(as, {
        nodes: [
          { id: 'G', name: 'Grid', nodeType: 0, ratedVoltageV: 400 },
          { id: 'L', name: 'Load', nodeType: 10, cableLengthM: 1000, study: { rOhmPerKm: 1, xOhmPerKm: 1, activePowerKw: 10000, powerFactor: 0.9 } },
        ],
        edges: [{ sourceId: 'G', targetId: 'L', edgeType: 0 }],
      })
      const res = await as('GET', `${BASE}/studies/load-flow`)
      assert.equal(res.statusCode, 200, res.body)
      const study = res.json() as LoadFlowStudy
      assert.equal(study.converged, false)
      assert.match(study.note!, /^No solution: (IterationLimit|Diverged|SingularJacobian) .* bus "L"/)
      assert.deepEqual([study.buses.length, study.branches.length], [0, 0])
      assert.equal((await as('PUT', `${BASE}/nodes/L`, { study: { rOhmPerKm: 1, xOhmPerKm: 1, activePowerKw: 10, powerFactor: 0.9 } })).statusCode, 200)
      assert.equal(((await as('GET', `${BASE}/studies/load-flow`)).json() as LoadFlowStudy).converged, true)
    })

    it('answered from the cache per network version; an edit (in any process) computes it again', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      await loadNetwork(as, plant())
      const handle = await connectDatabase(h.config.databaseUrl, { poolSize: 2 })
      t.after(() => handle.close())
      const sites = createSitesService({ handle, clock: h.clock, dependents: [] })
      const other = createElectricalService({ handle, clock: h.clock, sites })
      const orgId = org.id as OrgId
      const ask = () => withOrgScope(orgId, () => other.loadFlow(orgId, 'S1'))
      const first = await ask()
      assert.equal((await ask()).buses, first.buses, 'the same result, not computed again')
      assert.equal((await as('PUT', `${BASE}/nodes/L1`, { study: { ...PLANT_STUDY.L1, activePowerKw: 200 } })).statusCode, 200)
      let seen = first
      for (let i = 0; i < 100 && seen.buses === first.buses; i++) {
        seen = await ask()
        if (seen.buses === first.buses) await sleep(50) // PostgreSQL: the notification arrives just after the commit
      }
      assert.notEqual(seen.buses, first.buses)
      within(-branchOf(seen, 'L1').pToKw, 200, 1e-9, 'the edited load')
      assert.equal(((await as('GET', `${BASE}/studies/load-flow`)).json() as LoadFlowStudy).lossKw, seen.lossKw)
    })

    it('the pandapower export carries what the load flow reads: set-points, generator P, load P and Q, cable-table r/x, ampacity', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      const network = plant({ ...PLANT_STUDY, GEN: { activePowerKw: 50, voltageSetpointPu: 1.02 } })
      ;(network.nodes[0] as Record<string, unknown>).study = { voltageSetpointPu: 0.98 }
      await loadNetwork(as, network)
      const res = await as('GET', `${BASE}/export/pandapower?envelope=true`)
      assert.equal(res.statusCode, 200, res.body)
      const tables = res.json().net._object as Record<string, { _object: string }>
      const rows = (name: string) => {
        const { columns, data } = JSON.parse(tables[name]!._object) as { columns: string[]; data: unknown[][] }
        return data.map((values) => Object.fromEntries(columns.map((c, i) => [c, values[i]])))
      }
      assert.deepEqual(
        rows('ext_grid').map((r) => [r.name, r.vm_pu]),
        [['G', 0.98]],
      )
      assert.deepEqual(
        rows('gen').map((r) => [r.name, r.p_mw, r.vm_pu]),
        [['GEN', 0.05, 1.02]],
      )
      const [load] = rows('load').filter((r) => r.name === 'L1')
      assert.equal(load!.p_mw, 0.1)
      within(load!.q_mvar as number, 0.1 * Math.tan(Math.acos(0.9)), 1e-12, 'load q')
      const [line] = rows('line').filter((r) => r.name === 'MSB>L1')
      assert.deepEqual(
        [line!.std_type, line!.r_ohm_per_km, line!.x_ohm_per_km, line!.c_nf_per_km, line!.max_i_ka, line!.length_km],
        [null, 0.193, 0.08, 0, 0.25, 0.05],
      )
      assert.deepEqual(
        rows('motor').map((r) => [r.name, r.pn_mech_mw, r.cos_phi, r.efficiency_percent]),
        [['M1', 0.055, 0.85, 94]],
      )
    })
  })
}
