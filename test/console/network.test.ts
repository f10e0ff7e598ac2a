// The network editor and the time–current plot in headless Chromium, in site mode as the site-PIN owner: a small
// network built through the editor (add, connect, edit protection with a refused curve showing the API's message
// next to the field, delete a connection and a node), a refused import whose problems are marked on the file's
// diagram, and the TCC plot of a node (curves on log axes, the fault current line, a failing grading margin).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { Locator, Page } from 'playwright-core'
import { expect } from './expect.ts'
import { shot, signInWithPin, siteConsole } from './support.ts'

const AXE = readFileSync(join(import.meta.dirname, '..', '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8')

/** axe-core's serious and critical violations on the page as it is (evaluated, not a script tag: the console's CSP). */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE)
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string | null; nodes: unknown[] }> }> } }).axe
    const { violations } = await axe.run()
    return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.nodes.length})`)
  })
}

const SITE = 'tcc-1'
const BASE = `/api/sites/${SITE}/electrical`
const LONG_NAME = 'Overland conveyor drive motor number one at the tail end'

// The supply side, loaded through the API: grid → incomer breaker → main switchboard. The incomer's pickup and TMS
// are set so that it trips before the feeder breaker added in the editor at 3 kA: a grading violation.
const SEED = {
  nodes: [
    { id: 'GRID', name: 'Grid infeed', nodeType: 0, ratedVoltageV: 11000 },
    { id: 'CB-IN', name: 'Incomer', nodeType: 5, protectionCurve: 'IEC SI', protectionPickupA: 600, protectionTms: 0.05 },
    { id: 'MSB', name: 'Main switchboard', nodeType: 3, ratedVoltageV: 415 },
  ],
  edges: [
    { sourceId: 'GRID', targetId: 'CB-IN', edgeType: 0 },
    { sourceId: 'CB-IN', targetId: 'MSB', edgeType: 2 },
  ],
}

const node = (page: Page, id: string): Locator => page.locator(`.ol-node[data-node-id="${id}"]`)

/** Fills the open "Add a node" dialog and submits it. */
async function addNode(page: Page, fields: Record<string, string>, nodeType: string): Promise<void> {
  await page.getByRole('button', { name: 'Add node' }).click()
  const dialog = page.getByRole('dialog', { name: 'Add a node' })
  await dialog.waitFor()
  for (const [label, value] of Object.entries(fields)) await dialog.getByLabel(label, { exact: true }).fill(value)
  await dialog.getByLabel('Type').selectOption({ label: nodeType })
  await dialog.getByRole('button', { name: 'Add node' }).click()
  await dialog.waitFor({ state: 'detached' })
  // Redrawn from the API: the next step starts from a drawing that has the node.
  await node(page, fields.Id!).waitFor()
}

async function connect(page: Page, from: string, to: string, type: string): Promise<void> {
  await page.getByRole('button', { name: 'Connect nodes' }).click()
  const dialog = page.getByRole('dialog', { name: 'Connect two nodes' })
  await dialog.getByLabel('From').selectOption(from)
  await dialog.getByLabel('To').selectOption(to)
  await dialog.getByLabel('Connection type').selectOption({ label: type })
  await dialog.getByRole('button', { name: 'Connect' }).click()
  await dialog.waitFor({ state: 'detached' })
}

test('network editor and time–current plot: build, edit with a refused value, delete, a refused import on the diagram, the TCC plot', {
  timeout: 120_000,
}, async (t) => {
  const c = await siteConsole(t)
  await c.must('POST', '/api/sites', { code: SITE, name: 'TCC plant', timeZone: 'UTC' })
  await c.must('PUT', `${BASE}/network`, SEED)
  const page = await c.browser.page()
  await signInWithPin(page, c.origin, c.owner)
  await page.goto(`${c.origin}/sites/${SITE}`)
  await node(page, 'MSB').waitFor()

  // Add: a feeder breaker, a motor with a long name, a spare feeder; connect them below the switchboard.
  await addNode(page, { Id: 'CB-1', Name: 'Feeder breaker', 'Rated current (A)': '400' }, 'Circuit breaker')
  await addNode(page, { Id: 'M-1', Name: LONG_NAME }, 'Motor')
  await addNode(page, { Id: 'SPARE', Name: 'Spare feeder' }, 'Feeder / load')
  await connect(page, 'MSB', 'CB-1', 'Busbar link')
  await connect(page, 'CB-1', 'M-1', 'Cable')
  await connect(page, 'MSB', 'SPARE', 'Cable')
  // Each write redraws the section from the API: its summary says when the last one is drawn.
  await page.getByText(/^6 nodes, 5 edges;/).waitFor()
  assert.equal(await page.locator('.ol-node').count(), 6)
  const network = await c.must<{ edgeCount: number }>('GET', `${BASE}/network`)
  assert.equal(network.edgeCount, 5)

  // The long name wraps inside its box (no line wider than the box) and is whole in the tooltip.
  const label = await node(page, 'M-1').evaluate((g) => {
    const box = g.querySelector('rect')!.getBoundingClientRect()
    const lines = [...g.querySelectorAll('text.ol-label')]
    return {
      lines: lines.map((l) => l.textContent),
      inside: lines.every((l) => l.getBoundingClientRect().right <= box.right + 0.5),
      title: g.querySelector('title')!.textContent,
    }
  })
  assert.equal(label.lines.length, 2, `wrapped: ${JSON.stringify(label.lines)}`)
  assert.ok(label.inside, 'every label line inside the node box')
  assert.match(label.title!, new RegExp(LONG_NAME))

  // A connecting dialog refused by the API: a node connected to itself, the message next to "To".
  await page.getByRole('button', { name: 'Connect nodes' }).click()
  const connectDialog = page.getByRole('dialog', { name: 'Connect two nodes' })
  await connectDialog.getByLabel('From').selectOption('SPARE')
  await connectDialog.getByLabel('To').selectOption('SPARE')
  await connectDialog.getByRole('button', { name: 'Connect' }).click()
  await connectDialog.locator('[data-pointer="/targetId"] .field-error').filter({ hasText: 'equals sourceId' }).waitFor()
  await connectDialog.getByRole('button', { name: 'Cancel' }).click()

  // Edit CB-1's protection: an unknown curve is refused with the API's message next to the curve field; fixed, saved.
  await node(page, 'CB-1').click()
  const panel = page.locator('aside.node-panel')
  await panel.getByRole('heading', { name: 'Feeder breaker (CB-1)' }).waitFor()
  await panel.getByRole('button', { name: 'Edit' }).click()
  const edit = page.getByRole('dialog', { name: 'Edit CB-1' })
  await edit.getByLabel('Protection curve').fill('IEC XYZ')
  await edit.getByLabel('Pickup Is (A)').fill('300')
  await edit.getByLabel('TMS / time dial').fill('0.1')
  await edit.getByRole('button', { name: 'Save' }).click()
  const curveError = edit.locator('[data-pointer="/protectionCurve"] .field-error')
  await curveError.filter({ hasText: 'Unknown protection curve "IEC XYZ"' }).waitFor()
  assert.match((await curveError.textContent())!, /IEC SI/, 'the API lists the accepted names')
  assert.equal(await edit.getByLabel('Protection curve').getAttribute('aria-invalid'), 'true')
  assert.deepEqual(await seriousViolations(page), [], 'axe: the edit dialog with its refused value')
  await shot(page, 'network-editor-refused')
  assert.equal((await c.must<{ protectionCurve: string | null }>('GET', `${BASE}/nodes/CB-1`)).protectionCurve, null, 'the refusal changed nothing')
  await edit.getByLabel('Protection curve').fill('IEC SI')
  await edit.getByRole('button', { name: 'Save' }).click()
  await edit.waitFor({ state: 'detached' })
  await panel.getByRole('heading', { name: 'Feeder breaker (CB-1)' }).waitFor()
  await expect(() => page.evaluate(() => document.activeElement?.getAttribute('data-node-id') === 'CB-1'), 'the focus returns to the edited node')
  const saved = await c.must<{ protectionCurve: string; protectionPickupA: number; protectionTms: number; ratedCurrentA: number }>('GET', `${BASE}/nodes/CB-1`)
  assert.deepEqual([saved.protectionCurve, saved.protectionPickupA, saved.protectionTms, saved.ratedCurrentA], ['IEC SI', 300, 0.1, 400])

  // Delete: the spare feeder's connection from its panel, then the node itself.
  await node(page, 'SPARE').click()
  await panel.getByRole('heading', { name: 'Spare feeder (SPARE)' }).waitFor()
  await panel.getByRole('button', { name: 'Delete the connection MSB – SPARE (Cable)' }).click()
  await page.getByRole('dialog', { name: 'Delete a connection' }).getByRole('button', { name: 'Delete connection' }).click()
  await panel.getByText('Not connected.').waitFor()
  await panel.getByRole('button', { name: 'Delete', exact: true }).click()
  await page.getByRole('dialog', { name: 'Delete SPARE' }).getByRole('button', { name: 'Delete node' }).click()
  await page.getByText(/^5 nodes, 4 edges;/).waitFor()
  assert.equal(await page.locator('.ol-node').count(), 5)
  assert.equal((await c.must<{ edgeCount: number; nodeCount: number }>('GET', `${BASE}/network`)).edgeCount, 4)
  await shot(page, 'network-editor')

  // The TCC plot of the motor at 3 kA: CB-1 (300 A, TMS 0.1) and CB-IN (600 A, TMS 0.05) on log–log axes.
  await node(page, 'M-1').click()
  await panel.getByRole('heading', { name: `${LONG_NAME} (M-1)` }).waitFor()
  // A negative fault current: the API's 400, once, next to the field.
  await panel.getByLabel('Fault current (A)').fill('-5')
  await panel.getByRole('button', { name: 'Check protection' }).click()
  await panel.locator('[data-pointer="/faultCurrentA"] .field-error').filter({ hasText: 'must be >= 0' }).waitFor()
  assert.equal(await panel.locator('.form-error').count(), 0)
  await panel.getByLabel('Fault current (A)').fill('3000')
  await panel.getByRole('button', { name: 'Check protection' }).click()
  const plot = page.locator('.tcc svg[data-x-scale="log"][data-y-scale="log"]')
  await plot.waitFor()
  const drawn = await plot.evaluate((svg) => {
    const box = svg.getBoundingClientRect()
    // No named functions in here: the test's transpiler would wrap them in a helper the page does not have.
    const [x, y] = ['tcc-x-tick', 'tcc-y-tick'].map((cls) =>
      [...svg.querySelectorAll(`.${cls}`)].map((el) => ({
        value: Number(el.getAttribute('data-value')),
        at: Number(el.getAttribute(cls === 'tcc-x-tick' ? 'x' : 'y')),
      })),
    )
    return {
      curves: [...svg.querySelectorAll('.tcc-curve')].map((p) => ({
        id: p.getAttribute('data-device-id'),
        segments: (p.getAttribute('d') ?? '').split('L').length,
      })),
      fault: Number(svg.querySelector('.tcc-fault')?.getAttribute('x1')),
      faultCurrent: svg.querySelector('.tcc-fault')?.getAttribute('data-current-a'),
      x: x!,
      y: y!,
      margins: [...svg.querySelectorAll('.tcc-margin')].map((g) => ({ status: g.getAttribute('data-status'), text: g.textContent })),
      inside: box.right <= document.documentElement.clientWidth && box.width > 300,
    }
  })
  assert.deepEqual(
    drawn.curves.map((d) => d.id),
    ['CB-1', 'CB-IN'],
  )
  for (const curve of drawn.curves) assert.ok(curve.segments > 20, `${curve.id} drawn from many samples`)
  // Log axes: decade ticks (×10 each) at equal pixel steps, and 3 kA at log10(3) of the way from 1k to 10k.
  for (const axis of [drawn.x, drawn.y]) {
    assert.ok(axis.length >= 2)
    const steps = axis.slice(1).map((tick, i) => [tick.value / axis[i]!.value, tick.at - axis[i]!.at] as const)
    for (const [ratio] of steps) assert.ok(Math.abs(ratio - 10) < 1e-9, `decades: ${JSON.stringify(axis)}`)
    for (const [, step] of steps) assert.ok(Math.abs(step - steps[0]![1]) < 0.5, `equal steps per decade: ${JSON.stringify(axis)}`)
  }
  const at = (value: number) => drawn.x.find((tick) => tick.value === value)!.at
  assert.equal(drawn.faultCurrent, '3000')
  assert.ok(Math.abs(drawn.fault - (at(1000) + Math.log10(3) * (at(10_000) - at(1000)))) < 0.5, 'the fault line at 3 kA on the log axis')
  assert.equal(drawn.margins.length, 1)
  assert.equal(drawn.margins[0]!.status, 'Violation')
  assert.match(drawn.margins[0]!.text!, /✗/)
  assert.ok(drawn.inside, 'the plot fits the page')
  const row = page.locator('.tcc-table tr[data-status="Violation"]')
  assert.match(await row.innerText(), /CB-1[\s\S]*Violation/)
  await page.locator('.tcc-section').scrollIntoViewIfNeeded()
  await shot(page, 'network-tcc')
  assert.deepEqual(await seriousViolations(page), [], 'axe: the editor, the node panel and the plot')

  // The plot fits its box (redrawn at its width) from 800 to 2 560 px, and the page does not scroll sideways.
  for (const width of [800, 2560]) {
    await page.setViewportSize({ width, height: 900 })
    await expect(
      () =>
        page.locator('.tcc').evaluate((box) => {
          const svg = box.querySelector('svg')!.getBoundingClientRect()
          const own = box.getBoundingClientRect()
          return Math.abs(svg.width - own.width) < 1.5 && svg.right <= own.right + 0.5 && document.documentElement.scrollWidth <= window.innerWidth
        }),
      `the plot fits its box at ${width} px`,
    )
    await shot(page, `network-tcc-${width}`)
  }
  await page.setViewportSize({ width: 1280, height: 900 })

  // A refused import: a negative rating on the file's second node; the file's diagram marks it with the message.
  await page.getByRole('button', { name: 'Import network file' }).click()
  const importing = page.getByRole('dialog', { name: 'Import a network file' })
  const file = {
    nodes: [
      { id: 'G2', name: 'Grid', nodeType: 0 },
      { id: 'B2', name: 'Board with a bad rating', nodeType: 3, ratedCurrentA: -5 },
    ],
    edges: [{ sourceId: 'G2', targetId: 'B2', edgeType: 0 }],
  }
  await importing.getByLabel('Network file').setInputFiles({ name: 'network.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(file)) })
  await importing.getByRole('button', { name: 'Import and replace' }).click()
  await page.getByRole('heading', { name: 'Import refused: nothing was changed' }).waitFor()
  const marked = page.locator('.ol-node.ol-problem')
  await marked.first().waitFor()
  assert.deepEqual(await marked.evaluateAll((els) => els.map((el) => el.getAttribute('data-node-id'))), ['B2'])
  assert.match((await node(page, 'B2').locator('title').textContent())!, /Problem: ratedCurrentA: must be >= 0/)
  assert.match(
    (await node(page, 'B2').locator('text.ol-problem-text').allTextContents()).join(' '),
    /ratedCurrentA: must be >= 0/,
    'the message on the diagram',
  )
  assert.match((await page.getByRole('button', { name: /B2 .*Problem: ratedCurrentA: must be >= 0/ }).getAttribute('data-node-id'))!, /^B2$/)
  assert.match(await page.locator('.import-problems li[data-pointer="/nodes/1/ratedCurrentA"]').innerText(), /B2.*must be >= 0/)
  await shot(page, 'network-import-refused')
  assert.deepEqual(await seriousViolations(page), [], 'axe: the refused import on the diagram')
  assert.equal((await c.must<{ nodeCount: number }>('GET', `${BASE}/network`)).nodeCount, 5, 'the refused import changed nothing')

  // A file breaking a graph rule (a repeated edge, 422): that edge is marked on the file's diagram.
  await page.getByRole('button', { name: "Back to the site's network" }).click()
  await node(page, 'M-1').waitFor()
  await page.getByRole('button', { name: 'Import network file' }).click()
  const repeated = { nodes: [file.nodes[0], { ...file.nodes[1], ratedCurrentA: 800 }], edges: [file.edges[0], file.edges[0]] }
  await importing
    .getByLabel('Network file')
    .setInputFiles({ name: 'network.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(repeated)) })
  await importing.getByRole('button', { name: 'Import and replace' }).click()
  await page.locator('.import-problems li[data-pointer="/edges/1"]').waitFor()
  assert.equal(await page.locator('.ol-edge.ol-problem').count(), 1)
  assert.match((await page.locator('.ol-edge.ol-problem title').textContent()) ?? '', /G2 – B2: /)

  // Back, then a good file replaces the network.
  await page.getByRole('button', { name: "Back to the site's network" }).click()
  await node(page, 'M-1').waitFor()
  await page.getByRole('button', { name: 'Import network file' }).click()
  file.nodes[1]!.ratedCurrentA = 800
  await importing.getByLabel('Network file').setInputFiles({ name: 'network.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(file)) })
  await importing.getByRole('button', { name: 'Import and replace' }).click()
  await node(page, 'B2').waitFor()
  assert.equal(await page.locator('.ol-node').count(), 2)
  assert.deepEqual(page.errors, [])

  // A site member reads the network but is offered no editing (the API would refuse it: 403).
  const member = await c.addSiteUser('member')
  const reader = await c.browser.page()
  await signInWithPin(reader, c.origin, member, `/sites/${SITE}`)
  await node(reader, 'B2').click()
  await reader.locator('aside.node-panel').getByRole('heading', { name: 'Board with a bad rating (B2)' }).waitFor()
  assert.equal(await reader.getByRole('button', { name: 'Add node' }).count(), 0)
  assert.equal(await reader.locator('aside.node-panel').getByRole('button', { name: 'Edit' }).count(), 0)
  assert.deepEqual(reader.errors, [])
})
