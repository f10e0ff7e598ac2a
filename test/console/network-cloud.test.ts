// The network editor and the time–current plot in cloud mode, as an OIDC admin (issue 28 asks every walk in both
// modes; the site-mode walk in network.test.ts covers each control in depth): add a breaker with a refused setting
// (the API's message next to the field), fix it, connect it, plot its curves at a typed fault current, delete it.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { cloudConsole, seriousViolations, shot, signInWithProvider } from './support.ts'

const SITE = 'pit-7'
const BASE = `/api/sites/${SITE}/electrical`

const node = (page: Page, id: string) => page.locator(`.ol-node[data-node-id="${id}"]`)

test('cloud mode, OIDC admin: network editor (add with a refused setting, fix, connect, disconnect, delete) and the TCC plot', {
  timeout: 120_000,
}, async (t) => {
  const c = await cloudConsole(t)
  await c.must('POST', '/api/sites', { code: SITE, name: 'Pit 7', timeZone: 'Australia/Perth' })
  await c.must('PUT', `${BASE}/network`, {
    nodes: [
      { id: 'GRID', name: 'Grid infeed', nodeType: 0, ratedVoltageV: 11000 },
      { id: 'CB-IN', name: 'Incomer', nodeType: 5, protectionCurve: 'IEC SI', protectionPickupA: 600, protectionTms: 0.05 },
      { id: 'MSB', name: 'Main switchboard', nodeType: 3, ratedVoltageV: 415 },
    ],
    edges: [
      { sourceId: 'GRID', targetId: 'CB-IN', edgeType: 0 },
      { sourceId: 'CB-IN', targetId: 'MSB', edgeType: 2 },
    ],
  })
  const page = await c.browser.page()
  await signInWithProvider(page, c, 'ada', `/sites/${SITE}`)
  await page.getByRole('heading', { name: 'Awaiting approval' }).waitFor()
  await c.approve('ada', 'admin')
  await page.getByRole('button', { name: 'Check again' }).click()
  await node(page, 'MSB').waitFor()

  // Add a feeder breaker whose pickup the API refuses (negative): its message next to the field, nothing stored.
  await page.getByRole('button', { name: 'Add node' }).click()
  const add = page.getByRole('dialog', { name: 'Add a node' })
  await add.getByLabel('Id', { exact: true }).fill('CB-2')
  await add.getByLabel('Name', { exact: true }).fill('Dragline feeder')
  await add.getByLabel('Type').selectOption({ label: 'Circuit breaker' })
  await add.getByLabel('Protection curve').fill('IEC SI')
  await add.getByLabel('Pickup Is (A)').fill('-300')
  await add.getByLabel('TMS / time dial').fill('0.1')
  await add.getByRole('button', { name: 'Add node' }).click()
  const pickupError = add.locator('[data-pointer="/protectionPickupA"] .field-error')
  await pickupError.filter({ hasText: /\S/ }).waitFor()
  const api = await c.call<{ errors: Array<{ pointer: string; message: string }> }>('POST', `${BASE}/nodes`, {
    id: 'CB-2',
    name: 'Dragline feeder',
    nodeType: 5,
    protectionCurve: 'IEC SI',
    protectionPickupA: -300,
    protectionTms: 0.1,
  })
  assert.equal(api.status, 400)
  assert.equal(await pickupError.textContent(), api.body.errors.find((e) => e.pointer === '/protectionPickupA')?.message, "the API's own message")
  assert.equal((await c.call('GET', `${BASE}/nodes/CB-2`)).status, 404, 'the refusal stored nothing')
  await shot(page, 'network-editor-refused-cloud')
  await add.getByLabel('Pickup Is (A)').fill('300')
  await add.getByRole('button', { name: 'Add node' }).click()
  await add.waitFor({ state: 'detached' })
  await node(page, 'CB-2').waitFor()

  await page.getByRole('button', { name: 'Connect nodes' }).click()
  const link = page.getByRole('dialog', { name: 'Connect two nodes' })
  await link.getByLabel('From').selectOption('MSB')
  await link.getByLabel('To').selectOption('CB-2')
  await link.getByLabel('Connection type').selectOption({ label: 'Cable' })
  await link.getByRole('button', { name: 'Connect' }).click()
  await link.waitFor({ state: 'detached' })
  await page.getByText(/^4 nodes, 3 edges;/).waitFor()

  // The TCC plot of the new breaker at a typed 3 kA: its curve and the incomer's, on log axes, the fault line.
  await node(page, 'CB-2').click()
  const panel = page.locator('aside.node-panel')
  await panel.getByRole('heading', { name: 'Dragline feeder (CB-2)' }).waitFor()
  await panel.getByLabel('Fault current (A)').fill('3000')
  await panel.getByRole('button', { name: 'Check protection' }).click()
  const plot = page.locator('.tcc svg[data-x-scale="log"][data-y-scale="log"]')
  await plot.waitFor()
  assert.deepEqual(await plot.locator('.tcc-curve').evaluateAll((paths) => paths.map((p) => p.getAttribute('data-device-id'))), ['CB-2', 'CB-IN'])
  assert.equal(await plot.locator('.tcc-fault').getAttribute('data-current-a'), '3000')
  assert.deepEqual(await seriousViolations(page), [], 'axe: the network page with the plot')
  await shot(page, 'network-tcc-cloud')

  // Delete: its connection, then the breaker.
  await panel.getByRole('button', { name: 'Delete the connection MSB – CB-2 (Cable)' }).click()
  await page.getByRole('dialog', { name: 'Delete a connection' }).getByRole('button', { name: 'Delete connection' }).click()
  await panel.getByText('Not connected.').waitFor()
  await panel.getByRole('button', { name: 'Delete', exact: true }).click()
  await page.getByRole('dialog', { name: 'Delete CB-2' }).getByRole('button', { name: 'Delete node' }).click()
  await page.getByText(/^3 nodes, 2 edges;/).waitFor()
  assert.equal((await c.call('GET', `${BASE}/nodes/CB-2`)).status, 404)
  assert.deepEqual(page.errors, [], 'no script error and no CSP refusal')
})
