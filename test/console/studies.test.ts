// Issue 31 in the console, in headless Chromium in site mode as the site-PIN owner: the one-line diagram's fault-level
// layer (I″k max under each bus, the study in a table) and the protection check at the short-circuit study's current
// by default (the TCC plot's fault line, each device's current referred through the transformer, a pickup above
// I″k min flagged), the supply picker of issue 28, a typed current, and the study's 422 said on the page; the voltage
// layer (the load flow's |U| under each bus, buses and branches in tables).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { expect } from './expect.ts'
import { seriousViolations, shot, signInWithPin, siteConsole } from './support.ts'

const SITE = 'sc-1'
const BASE = `/api/sites/${SITE}/electrical`
const UTIL_STUDY = { scPowerMaxMva: 250, scPowerMinMva: 150, rxRatio: 0.1 }

// A grid at 11 kV through an 11/0.42 kV transformer to the LV board, a standby generator on the board, an MCC fed by
// a cable, an outgoing breaker OUT on the MCC whose pickup is above any fault current there.
const NETWORK = {
  nodes: [
    { id: 'UTIL', name: 'Grid', nodeType: 0, ratedVoltageV: 11_000, study: UTIL_STUDY },
    { id: 'HVB', name: 'HV board', nodeType: 3, ratedVoltageV: 11_000 },
    { id: 'CBH', name: 'HV breaker', nodeType: 5, protectionCurve: 'IEC SI', protectionPickupA: 300, protectionTms: 0.2 },
    {
      id: 'TX',
      name: 'TX 11/0.42 kV',
      nodeType: 2,
      cableLengthM: 500,
      study: { ratedPowerKva: 1000, hvRatedVoltageKv: 11, lvRatedVoltageKv: 0.42, ukPercent: 6, urPercent: 1, rOhmPerKm: 0.2, xOhmPerKm: 0.1 },
    },
    { id: 'LVB', name: 'LV board', nodeType: 3, ratedVoltageV: 400 },
    { id: 'CBG', name: 'Generator breaker', nodeType: 5, protectionCurve: 'IEC VI', protectionPickupA: 900, protectionTms: 0.3 },
    {
      id: 'GEN',
      name: 'Standby generator',
      nodeType: 1,
      ratedVoltageV: 400,
      cableLengthM: 30,
      study: { ratedPowerKva: 500, ratedVoltageKv: 0.4, xdSubtransientPercent: 15, rxRatio: 0.15, powerFactor: 0.8, rOhmPerKm: 0.05, xOhmPerKm: 0.08 },
    },
    { id: 'CBL', name: 'MCC feeder', nodeType: 5, protectionCurve: 'IEC SI', protectionPickupA: 2000, protectionTms: 0.1 },
    { id: 'MCC', name: 'MCC', nodeType: 4, ratedVoltageV: 400, cableLengthM: 100, study: { rOhmPerKm: 0.1, xOhmPerKm: 0.08 } },
    { id: 'OUT', name: 'Outgoing', nodeType: 5, protectionCurve: 'IEC SI', protectionPickupA: 40_000, protectionTms: 0.05 },
  ],
  edges: [
    { sourceId: 'UTIL', targetId: 'HVB', edgeType: 2 },
    { sourceId: 'HVB', targetId: 'CBH', edgeType: 2 },
    { sourceId: 'CBH', targetId: 'TX', edgeType: 0 },
    { sourceId: 'TX', targetId: 'LVB', edgeType: 3 },
    { sourceId: 'LVB', targetId: 'CBG', edgeType: 2 },
    { sourceId: 'CBG', targetId: 'GEN', edgeType: 0 },
    { sourceId: 'LVB', targetId: 'CBL', edgeType: 2 },
    { sourceId: 'CBL', targetId: 'MCC', edgeType: 0 },
    { sourceId: 'MCC', targetId: 'OUT', edgeType: 2 },
  ],
}

interface Study {
  buses: Array<{ busId: string; ikssMaxKa: number }>
}
interface Coordination {
  faultCurrentA: number
  rows: Array<{ deviceId: string; currentRatio: number; pickupAboveMinFault: boolean | null }>
}

const node = (page: Page, id: string) => page.locator(`.ol-node[data-node-id="${id}"]`)
const kA = (value: number) => `${Number(value.toPrecision(3))} kA`

/** The fault line of the plot once drawn with this source (and the table beside it). */
async function faultLine(page: Page, source: string): Promise<number> {
  const line = page.locator(`.tcc svg .tcc-fault[data-source="${source}"]`)
  await line.waitFor({ state: 'attached' })
  return Number(await line.getAttribute('data-current-a'))
}

test('fault levels on the one-line and the TCC plot at the computed fault current, with the supply picker and the study’s 422', {
  timeout: 180_000,
}, async (t) => {
  const c = await siteConsole(t)
  await c.must('POST', '/api/sites', { code: SITE, name: 'Short-circuit plant', timeZone: 'UTC' })
  await c.must('PUT', `${BASE}/network`, NETWORK)
  const study = await c.must<Study>('GET', `${BASE}/studies/short-circuit`)
  const mcc = study.buses.find((b) => b.busId === 'MCC')!
  const page = await c.browser.page()
  await signInWithPin(page, c.origin, c.owner)
  await page.goto(`${c.origin}/sites/${SITE}`)
  await node(page, 'MCC').waitFor()

  // The fault-level layer: I″k max under each bus the study names after a node, every bus in the table. It asks the
  // study for no contributions (it shows none); the network holds no zero-sequence data, so no I″k1, and it says why.
  const asked = page.waitForRequest((r) => r.url().includes('/studies/short-circuit'))
  await page.getByRole('button', { name: 'Show fault levels' }).click()
  assert.match((await asked).url(), /\?contributions=none$/)
  await page.getByRole('table', { name: 'Short-circuit currents by bus' }).waitFor()
  assert.match(await page.locator('.fault-levels tr[data-bus-id="MCC"]').innerText(), /—\s+—\s*$/)
  assert.match(await page.locator('.fault-levels .earth-faults').innerText(), /^No I″k1: \d+ bus\(es\) lack zero-sequence data \(\w+ of \w+/)
  assert.equal(await page.locator('.fault-levels tr[data-bus-id]').count(), study.buses.length)
  assert.match(await page.locator('.fault-levels tr[data-bus-id="MCC"]').innerText(), new RegExp(kA(mcc.ikssMaxKa).replace('.', '\\.')))
  assert.equal(await page.locator('text.ol-annotation[data-node-id="MCC"]').textContent(), `I″k ${kA(mcc.ikssMaxKa)}`)
  for (const bus of ['HVB', 'LVB', 'GEN']) assert.equal(await page.locator(`text.ol-annotation[data-node-id="${bus}"]`).count(), 1, bus)
  assert.equal(await page.getByRole('button', { name: 'Hide fault levels' }).getAttribute('aria-pressed'), 'true')
  await shot(page, 'studies-fault-levels')
  assert.deepEqual(await seriousViolations(page), [], 'axe: the fault-level layer and its table')

  // The voltage layer (the load flow) replaces it: first the study's 422 (the generator's output is not set), said as
  // the API says it; once set, |U| under each bus and the buses and branches in tables, the API's own figures.
  await page.getByRole('button', { name: 'Show voltages' }).click()
  const lacking = page.locator('.fault-levels [role="alert"][data-code="StudyDataMissing"]')
  await lacking.waitFor()
  assert.match(await lacking.innerText(), /activePowerKw of node "GEN"/)
  // Every parameter the API lists, not only the first.
  const refusal = await c.call<{ missing: Array<{ nodeId: string; parameter: string }> }>('GET', `${BASE}/studies/load-flow`)
  assert.equal(refusal.status, 422)
  assert.deepEqual(
    await page
      .getByRole('table', { name: 'Missing study parameters' })
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-node-id'), r.getAttribute('data-parameter')])),
    refusal.body.missing.map((m) => [m.nodeId, m.parameter]),
  )
  assert.equal(await page.getByRole('button', { name: 'Show fault levels' }).getAttribute('aria-pressed'), 'false', 'one layer at a time')
  assert.equal(await page.locator('text.ol-annotation').count(), 0)
  const gen = NETWORK.nodes.find((n) => n.id === 'GEN')!
  await c.must('PUT', `${BASE}/nodes/GEN`, { study: { ...gen.study, activePowerKw: 200 } })
  await page.getByRole('button', { name: 'Hide voltages' }).click()
  await page.getByRole('button', { name: 'Show voltages' }).click()
  await page.getByRole('table', { name: 'Bus voltages' }).waitFor()
  const flow = await c.must<{ converged: boolean; buses: Array<{ busId: string; voltagePu: number }>; branches: unknown[] }>('GET', `${BASE}/studies/load-flow`)
  assert.equal(flow.converged, true)
  assert.equal(await page.locator('.fault-levels tr[data-bus-id]').count(), flow.buses.length)
  assert.equal(await page.getByRole('table', { name: 'Branch flows' }).locator('tbody tr').count(), flow.branches.length)
  for (const bus of flow.buses.filter((b) => ['LVB', 'MCC'].includes(b.busId)))
    assert.equal(await page.locator(`text.ol-annotation[data-node-id="${bus.busId}"]`).textContent(), `U ${bus.voltagePu.toFixed(3)} pu`)
  await shot(page, 'studies-voltages')
  assert.deepEqual(await seriousViolations(page), [], 'axe: the voltage layer and its tables')
  await page.getByRole('button', { name: 'Hide voltages' }).click()
  assert.equal(await page.locator('text.ol-annotation').count(), 0)

  // OUT's check runs at once at the study's current: I″k max at the MCC, towards the nearest supply (the generator).
  await node(page, 'OUT').click()
  const panel = page.locator('aside.node-panel')
  await panel.getByRole('heading', { name: 'Outgoing (OUT)' }).waitFor()
  const computed = await faultLine(page, 'shortCircuitStudy')
  assert.ok(Math.abs(computed - mcc.ikssMaxKa * 1000) < 1e-6 * computed, `${computed} vs ${mcc.ikssMaxKa} kA`)
  assert.match(await page.locator('.tcc-fault-summary').innerText(), /I″k max at MCC, short-circuit study\), towards GEN/)
  const nearest = await c.must<Coordination>('GET', `${BASE}/nodes/OUT/coordination`)
  assert.equal(nearest.rows[0]!.pickupAboveMinFault, true)
  assert.equal(await page.locator('.tcc-table tr[data-device-id="OUT"]').getAttribute('data-min-fault'), 'true')
  await panel.locator('[data-flag="pickupAboveMinFault"]').filter({ hasText: 'OUT' }).waitFor()

  // The supply picker: the path to the grid, through the transformer: CBH carries the grid's share of the fault (the
  // generator on the LV board feeds the rest past it), on the HV side: less than the current × 0.42/11.
  const toGrid = await c.must<Coordination>('GET', `${BASE}/nodes/OUT/coordination?supplyId=UTIL`)
  const cbhRatio = toGrid.rows.find((r) => r.deviceId === 'CBH')!.currentRatio
  assert.ok(cbhRatio < 0.9 * (0.42 / 11), `${cbhRatio}`)
  await panel.getByLabel('Supply').selectOption('UTIL')
  await panel.getByRole('button', { name: 'Check protection' }).click()
  await page.locator('.tcc-table tr[data-device-id="CBH"]').waitFor()
  assert.match(await page.locator('.tcc-table').innerText(), /Path: OUT → MCC → CBL → LVB → TX → CBH → HVB → UTIL/)
  assert.ok((await page.locator('.tcc-table tr[data-device-id="CBH"]').innerText()).includes(`× ${Number(cbhRatio.toPrecision(4))})`))
  // …and that path is the one highlighted on the diagram.
  await page.locator('.ol-node.ol-path[data-node-id="TX"]').waitFor()
  assert.equal(await page.locator('.ol-node.ol-path[data-node-id="GEN"]').count(), 0)
  assert.deepEqual(await page.locator('.tcc svg .tcc-curve').evaluateAll((paths) => paths.map((p) => p.getAttribute('data-device-id'))), ['OUT', 'CBL', 'CBH'])
  await page.locator('.tcc-section').scrollIntoViewIfNeeded()
  await shot(page, 'studies-tcc-computed')
  assert.deepEqual(await seriousViolations(page), [], 'axe: the check at the computed current with the supply picker')

  // A typed current wins.
  await panel.getByLabel('Fault current (A)').fill('3000')
  await panel.getByRole('button', { name: 'Check protection' }).click()
  assert.equal(await faultLine(page, 'typed'), 3000)

  // The study lacks data: the layer and the check say which node lacks which parameter; a typed current still works.
  await c.must('PUT', `${BASE}/nodes/UTIL`, { study: { scPowerMaxMva: 250, rxRatio: 0.1 } })
  // A check that fails takes the last check's plot away (it would show curves of another current).
  await panel.getByLabel('Fault current (A)').fill('')
  await panel.getByRole('button', { name: 'Check protection' }).click()
  await panel.locator('[data-code="StudyDataMissing"]').waitFor()
  assert.equal(await page.locator('.tcc svg').count(), 0, 'no plot left from the check before')
  await page.reload()
  await node(page, 'OUT').waitFor()
  await page.getByRole('button', { name: 'Show fault levels' }).click()
  const said = page.locator('.fault-levels [role="alert"][data-code="StudyDataMissing"]')
  await said.waitFor()
  assert.match(await said.innerText(), /scPowerMinMva of node "UTIL"/)
  assert.equal(await page.locator('text.ol-annotation').count(), 0)
  await node(page, 'OUT').click()
  await panel.getByRole('heading', { name: 'Outgoing (OUT)' }).waitFor()
  const missing = panel.locator('[data-code="StudyDataMissing"]')
  await missing.waitFor()
  assert.match(await missing.innerText(), /scPowerMinMva of node "UTIL"/)
  await shot(page, 'studies-missing')
  assert.deepEqual(await seriousViolations(page), [], 'axe: the study’s 422 on the page')
  await panel.getByLabel('Fault current (A)').fill('5000')
  await panel.getByRole('button', { name: 'Check protection' }).click()
  assert.equal(await faultLine(page, 'typed'), 5000)
  await expect(
    () =>
      panel
        .locator('[data-code="StudyDataMissing"]')
        .count()
        .then((n) => n === 0),
    'the typed check replaced the message',
  )
  assert.deepEqual(page.errors, [])
})
