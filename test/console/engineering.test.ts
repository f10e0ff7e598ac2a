// The engineering pages of the web console in headless Chromium: the site page's one-line diagram (supplies on
// top, a node's ratings and supply path on click and from the keyboard, loops and unsupplied islands marked) and the
// historian page (upload with progress, batch completed, rejected rows, trend drawn from server-side buckets,
// zoom refetching finer buckets) and the alarm load chart. Screenshots go to test-results/console/.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { build } from 'esbuild'
import { expect } from './expect.ts'
import { shot, signInWithPin, siteConsole } from './support.ts'

const SITE = 'chpp-1'

// A small plant: grid → transformer → main switchboard → two breakers → motor and feeder; a generator on a second
// bus joined by a bus tie, a ring closed by a cable (a loop), and an island with no supply.
const NODES = [
  { id: 'GRID', name: 'Grid infeed 33 kV', nodeType: 0, ratedVoltageV: 33000 },
  { id: 'GEN', name: 'Standby generator', nodeType: 1, ratedVoltageV: 415, ratedPowerKw: 500 },
  { id: 'TX1', name: 'Transformer 33/0.415', nodeType: 2, ratedPowerKw: 1500 },
  { id: 'MSB', name: 'Main switchboard', nodeType: 3, ratedVoltageV: 415, ratedCurrentA: 2500 },
  { id: 'MSB-B', name: 'Switchboard B', nodeType: 3, ratedVoltageV: 415 },
  { id: 'CB-1', name: 'Conveyor breaker', nodeType: 5, ratedCurrentA: 400, protectionCurve: 'IEC SI', protectionPickupA: 300, protectionTms: 0.1 },
  { id: 'CB-IN', name: 'Incomer breaker', nodeType: 5, ratedCurrentA: 2500, protectionCurve: 'IEC SI', protectionPickupA: 2000, protectionTms: 0.3 },
  { id: 'M-1', name: 'Conveyor motor', nodeType: 8, ratedPowerKw: 160, ratedCurrentA: 280, cableSize: '3C 120mm² Cu', cableLengthM: 85 },
  { id: 'FDR-1', name: 'Lighting feeder', nodeType: 10, ratedCurrentA: 63 },
  { id: 'ISO-DB', name: 'Old workshop board', nodeType: 3 },
  { id: 'ISO-L', name: 'Workshop lights', nodeType: 10 },
]
const EDGES = [
  { sourceId: 'GRID', targetId: 'TX1', edgeType: 0 },
  { sourceId: 'TX1', targetId: 'CB-IN', edgeType: 3 },
  { sourceId: 'CB-IN', targetId: 'MSB', edgeType: 2 },
  { sourceId: 'MSB', targetId: 'CB-1', edgeType: 2 },
  { sourceId: 'CB-1', targetId: 'M-1', edgeType: 0 },
  { sourceId: 'GEN', targetId: 'MSB-B', edgeType: 0 },
  { sourceId: 'MSB', targetId: 'MSB-B', edgeType: 4 },
  { sourceId: 'MSB-B', targetId: 'FDR-1', edgeType: 0 },
  { sourceId: 'FDR-1', targetId: 'M-1', edgeType: 0 },
  { sourceId: 'ISO-DB', targetId: 'ISO-L', edgeType: 0 },
]

/** A long-layout export: one sample a minute for 12 hours of two tags, and one row that cannot be read. */
function trendCsv(): string {
  const start = Date.parse('2026-03-02T00:00:00Z')
  const lines = ['timestamp,tag,value,quality']
  for (let i = 0; i < 720; i++) {
    const ts = new Date(start + i * 60_000).toISOString().replace('T', ' ').slice(0, 19)
    lines.push(`${ts},PUMP.FLOW,${(50 + 20 * Math.sin(i / 40)).toFixed(2)},100`)
    lines.push(`${ts},PUMP.PRESS,${(4 + Math.cos(i / 25)).toFixed(3)},100`)
    if (i === 100) lines.push('not a time,PUMP.FLOW,1,100')
  }
  return `${lines.join('\n')}\n`
}
const MAPPING = 'historian_tag,instance_id,tag_key,unit\nPUMP.FLOW,ins_pump,flow,m3/h\nPUMP.PRESS,ins_pump,pressure,bar\n'

test("engineering pages: the site page's one-line diagram and the historian page, in headless Chromium", { timeout: 110_000 }, async (t) => {
  const c = await siteConsole(t)
  await c.must('POST', '/api/sites', { code: SITE, name: 'Hunter Valley CHPP', timeZone: 'UTC', location: 'Hunter Valley' })
  const plc = await c.must<{ id: string }>('POST', `/api/sites/${SITE}/controllers`, {
    name: 'Wash plant PLC',
    platform: 1,
    assetNumber: 'PLC-01',
    connection: { protocol: 'EtherNet/IP', ipAddress: '10.20.1.15', cipPath: '1,0' },
  })
  await c.must('POST', `/api/sites/${SITE}/controllers/${plc.id}/assign`, { edgeId: 'edge-7', edgePlcId: 'wash' })
  await c.must('POST', `/api/sites/${SITE}/instances`, { id: 'ins_pump', name: 'Slurry pump 1', typeId: 'pump', assetNumber: 'P-001', controllerId: plc.id })
  await c.must('PUT', `/api/sites/${SITE}/electrical/network`, { nodes: NODES, edges: EDGES })
  const page = await c.browser.page()
  // Every failed API call is an error here (the shell's own 401 before sign-in is not: the page is signed in first).
  const failed: string[] = []
  await signInWithPin(page, c.origin, c.owner)
  page.on('response', (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.request().method()} ${response.url()}`)
  })

  await t.test('site page: supplies on top, node panel with ratings, protection and supply path, loops and islands', async () => {
    await page.goto(`${c.origin}/sites/${SITE}`)
    await page.getByRole('heading', { name: 'Hunter Valley CHPP (chpp-1)' }).waitFor()
    // Controllers with connection settings and edge assignment; instances.
    const controllers = page.getByRole('region', { name: 'Controllers' })
    await controllers.getByText('10.20.1.15').waitFor()
    assert.match(await controllers.innerText(), /edge-7[\s\S]*wash/)
    await page.getByRole('region', { name: 'Instances' }).getByText('Slurry pump 1').waitFor()

    const nodes = page.locator('.ol-node')
    await nodes.first().waitFor()
    assert.equal(await nodes.count(), NODES.length)
    // Supplies on the top row: their boxes are above every other node of the supplied network.
    const boxes = await nodes.evaluateAll((els) =>
      els.map((el) => ({ id: el.getAttribute('data-node-id'), type: Number(el.getAttribute('data-node-type')), top: el.getBoundingClientRect().top })),
    )
    const supplyTops = boxes.filter((b) => b.type === 0 || b.type === 1).map((b) => b.top)
    const otherTops = boxes.filter((b) => b.type !== 0 && b.type !== 1 && !String(b.id).startsWith('ISO')).map((b) => b.top)
    assert.equal(supplyTops.length, 2)
    assert.ok(Math.max(...supplyTops) < Math.min(...otherTops), `supplies at ${supplyTops}, others from ${Math.min(...otherTops)}`)
    assert.equal(new Set(supplyTops.map((v) => Math.round(v))).size, 1, 'both supplies on one row')

    // Loops and islands: listed, and marked on the diagram.
    await page.getByRole('heading', { name: 'Loops' }).waitFor()
    assert.match(await page.getByRole('region', { name: 'Loops' }).innerText(), /Loop 1/)
    assert.match(await page.getByRole('region', { name: 'Islands' }).innerText(), /no supply/)
    assert.ok((await page.locator('.ol-edge.ol-loop').count()) >= 3, 'loop edges highlighted')
    assert.equal(await page.locator('.ol-node.ol-island').count(), 2, 'the unsupplied island highlighted')

    // Click a node: its ratings, protection and supply path in the panel, and the path highlighted on the diagram.
    await page.locator('.ol-node[data-node-id="CB-1"]').click()
    const panel = page.locator('aside.node-panel')
    await panel.getByRole('heading', { name: 'Conveyor breaker (CB-1)' }).waitFor()
    await panel.getByText('Rated current').waitFor()
    assert.match(await panel.innerText(), /400 A/)
    // The check runs at once at the short-circuit study's current, which this network lacks the data for (issue 31):
    // the study's 422 is said; a typed current checks without it.
    await panel.locator('[data-code="StudyDataMissing"]').waitFor()
    await expect(async () => failed.length === 2, 'the two reads of the check answered')
    assert.deepEqual(
      failed
        .splice(0)
        .map((f) => f.replace(/ http\S+\/nodes\//, ' ').replace(/\?.*/, ''))
        .sort(),
      ['422 GET CB-1/coordination', '422 GET CB-1/trip-time'],
      'the study’s 422s, expected here',
    )
    await panel.getByLabel('Fault current (A)').fill('3000')
    await panel.getByRole('button', { name: 'Check protection' }).click()
    await panel.getByText(/trips in [\d.]+ s/).waitFor()
    await panel.locator('.supply-path').first().waitFor()
    // Both supplies' paths, nearest first; the nearest highlighted.
    assert.deepEqual(await panel.locator('.supply-path').allInnerTexts(), ['CB-1 → MSB → MSB-B → GEN', 'CB-1 → MSB → CB-IN → TX1 → GRID'])
    await page.locator('.ol-node.ol-path[data-node-id="GEN"]').waitFor()
    assert.equal(await page.locator('.ol-node.ol-path').count(), 4)
    await panel.getByRole('button', { name: 'Highlight the path to GRID' }).click()
    await page.locator('.ol-node.ol-path[data-node-id="GRID"]').waitFor()
    assert.equal(await page.locator('.ol-node.ol-path').count(), 5)
    assert.ok((await page.locator('.ol-edge.ol-path').count()) >= 4, 'path edges highlighted')
    assert.equal(await page.locator('.ol-node[data-node-id="CB-1"]').getAttribute('aria-pressed'), 'true')

    // Keyboard: focus a node, move with the arrows, select with Enter.
    await page.locator('.ol-node[data-node-id="M-1"]').focus()
    await page.keyboard.press('Enter')
    await panel.getByRole('heading', { name: 'Conveyor motor (M-1)' }).waitFor()
    assert.match(await panel.innerText(), /3C 120mm² Cu/)
    await page.locator('.ol-node[data-node-id="ISO-L"]').focus()
    await page.keyboard.press(' ')
    await panel.getByText('Not supplied: no path to any supply.').waitFor()
    await page.getByRole('button', { name: 'Fit the whole network in view' }).click()
    await shot(page, 'site')
  })

  await t.test('historian page: upload with progress, batch complete, rejected rows, trend drawn and zoomed', async () => {
    await page.goto(`${c.origin}/historian?site=${SITE}`)
    await page.getByRole('heading', { name: 'Import an export' }).waitFor()
    await page.getByLabel('Layout').selectOption('long')
    await page.getByLabel('Trend export (CSV)').setInputFiles({ name: 'pump-export.csv', mimeType: 'text/csv', buffer: Buffer.from(trendCsv()) })
    await page.getByLabel('Start from a mapping file (optional)').setInputFiles({ name: 'mapping.csv', mimeType: 'text/csv', buffer: Buffer.from(MAPPING) })
    // A dry run reads the tags; the mapping editor holds the file's mapping (test/console/historian-import.test.ts walks it).
    await page.getByRole('button', { name: 'Read the tags' }).click()
    await page.locator('tr[data-historian-tag="PUMP.FLOW"]').waitFor()
    await page.getByRole('button', { name: 'Import', exact: true }).click()
    await page.getByText(/Imported 1440 samples/).waitFor()
    assert.equal(await page.locator('progress').evaluate((el) => (el as HTMLProgressElement).value), 1)
    const row = page.locator('tr[data-status="complete"]').first()
    await row.waitFor()
    assert.match(await row.innerText(), /pump-export\.csv[\s\S]*complete/)

    // The trend of the batch's tags is drawn with points from server-side buckets.
    const trend = page.locator('.trend[data-points]')
    await trend.waitFor()
    const points = Number(await trend.getAttribute('data-points'))
    assert.ok(points > 100, `only ${points} points`)
    const wideBucket = await trend.getAttribute('data-bucket')
    assert.notEqual(wideBucket, 'raw')
    assert.equal((await page.locator('.trend canvas').count()) >= 1, true)
    await shot(page, 'historian')

    // Zoom: drag across part of the chart refetches a shorter period at a finer bucket; reset goes back.
    const over = page.locator('.trend .u-over')
    const box = (await over.boundingBox())!
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2)
    await page.mouse.down()
    await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2, { steps: 5 })
    await page.mouse.up()
    await page.waitForFunction((before) => document.querySelector('.trend')?.getAttribute('data-bucket') !== before, wideBucket)
    const reset = page.getByRole('button', { name: 'Reset zoom' })
    assert.equal(await reset.isEnabled(), true)
    await reset.click()
    await page.waitForFunction((before) => document.querySelector('.trend')?.getAttribute('data-bucket') === before, wideBucket)

    // Rejected rows of the batch, from the rejections endpoint.
    await row.getByRole('button', { name: /Rejected rows/ }).click()
    const rejections = page.getByRole('region', { name: 'Rejected rows' })
    await rejections.locator('td').first().waitFor()
    assert.match(await rejections.innerText(), /1 rejection/)

    // Reloaded, the page lists batches as summaries: the tag picker reads the complete batches whole for their tags,
    // and "Trend" on a row reads its batch and draws its tags.
    await page.reload()
    const picker = page.locator('.tag-picker')
    await picker.locator('input[type=checkbox]').first().waitFor()
    assert.deepEqual(await picker.locator('label').allInnerTexts(), ['ins_pump · flow (m3/h)', 'ins_pump · pressure (bar)'])
    assert.equal(await page.locator('.trend').count(), 0)
    await page
      .locator('tr[data-status="complete"]')
      .first()
      .getByRole('button', { name: /Trend the tags/ })
      .click()
    await page.locator('.trend[data-points]').waitFor()
    assert.equal(await picker.locator('input[type=checkbox]:checked').count(), 2)

    // A gateway's live samples: its batch of the current window is listed open and is trended like a complete one.
    await c.must('PUT', `/api/sites/${SITE}/instances/ins_pump`, { tagMappings: { flow: 'N7:0' } })
    const now = Date.now()
    const samples = Array.from({ length: 30 }, (_, i) => ({ instanceId: 'ins_pump', tagKey: 'flow', ts: now - (30 - i) * 1_000, value: 40 + i }))
    await c.must('POST', `/api/sites/${SITE}/historian/samples?batchKey=gw-1`, { samples })
    await page.reload()
    const open = page.locator('tr[data-status="open"]').first()
    await open.getByRole('button', { name: /Trend the tags/ }).click()
    await page.locator('.trend[data-points]').waitFor()
    assert.deepEqual(await picker.locator('label').allInnerTexts(), ['ins_pump · flow'])
  })

  await t.test('alarm load chart (for the alarms page) draws a real load answer', async () => {
    // 30 activations of one alarm within 10 minutes (a flood), then the load of the hour around them.
    const start = Date.now() - 40 * 60_000
    const events = Array.from({ length: 60 }, (_, i) => ({
      eventId: `ev-${i}`,
      instanceId: 'ins_pump',
      condition: 'HI_FLOW',
      priority: 'high',
      state: i % 2 === 0 ? 'active' : 'normal',
      occurredAt: new Date(start + i * 9_000).toISOString(),
    }))
    await c.must('POST', `/api/sites/${SITE}/alarms/events`, { events })
    const load = await c.must<{ activations: number; floods: unknown[] }>(
      'GET',
      `/api/sites/${SITE}/alarms/load?from=${encodeURIComponent(new Date(start - 20 * 60_000).toISOString())}&to=${encodeURIComponent(new Date(start + 40 * 60_000).toISOString())}`,
    )
    assert.equal(load.activations, 30)
    assert.equal(load.floods.length, 1)
    // The chart module alone, bundled as a script into a blank page (the console bundle includes it only where used).
    const bundle = await build({
      entryPoints: [join(import.meta.dirname, '..', '..', 'web', 'src', 'charts', 'alarm-load.ts')],
      bundle: true,
      format: 'iife',
      globalName: 'AlarmLoadChart',
      write: false,
      logLevel: 'silent',
    })
    const blank = await c.browser.page()
    await blank.setContent('<main><div id="chart"></div></main>')
    await blank.addScriptTag({ content: bundle.outputFiles[0]!.text })
    const drawn = await blank.evaluate((data) => {
      const el = document.getElementById('chart')!
      const remove = (
        window as unknown as { AlarmLoadChart: { renderAlarmLoadChart(el: HTMLElement, d: unknown): () => void } }
      ).AlarmLoadChart.renderAlarmLoadChart(el, data)
      const result = {
        canvases: el.querySelectorAll('canvas').length,
        text: el.innerText,
        label: el.querySelector('[role=img]')?.getAttribute('aria-label') ?? '',
      }
      remove()
      return { ...result, after: el.childElementCount }
    }, load)
    assert.ok(drawn.canvases >= 1)
    assert.match(drawn.text, /Activations\s+30/)
    assert.match(drawn.label, /30 activations.*1 flood\b/)
    assert.equal(drawn.after, 0, 'the returned function removes the chart')
    assert.deepEqual(blank.errors, [])
  })

  assert.deepEqual(page.errors, [])
  assert.deepEqual(failed, [])
})
