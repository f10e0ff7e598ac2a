import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { SAMPLES_DIR } from '../../src/modules/historian/parse/test-support.ts'
import { cloudConsole, seriousViolations, shot, signInWithPin, signInWithProvider, siteConsole, type ConsoleServer } from './support.ts'

// The historian page's mapping editor (issue 28) in a real headless Chromium against a real `sitegrid serve`: a
// third-party export (the heating controller's wide data-logger file of shared/data/historian-samples, 37 tag columns) is
// read by a dry run, each tag gets a proposed instance and tag key from the site's instances and their tag mappings,
// the engineer corrects, imports, and sees the rejected values by reason.

const SAMPLE = `${SAMPLES_DIR}logisland_heating_controller_wide.csv`

interface BatchAnswer {
  status: string
  rowsRejected: number
  samplesStored: number
  sentinelValues: number
  tags: Array<{ historianTag: string; instanceId: string; tagKey: string; unit: string | null }>
  unmappedTags: Array<{ tag: string; rows: number }>
}

/** The rows of the import's "Rejections by reason" table, once shown: each reason with its count. */
async function rejectionsByReason(page: Page): Promise<string[][]> {
  const reasons = page.getByRole('table', { name: 'Rejections by reason' })
  await reasons.waitFor()
  return reasons.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '')))
}

/** The heating plant the export belongs to: a controller and two instances the mapping editor proposes from. */
/** The sample export in the import form (wide layout, Berlin local time, 888.8 meaning no value), then "Read the tags". */
async function readTagsOfSample(page: Page): Promise<void> {
  await page.getByLabel('Trend export (CSV)').setInputFiles(SAMPLE)
  await page.getByLabel('Layout').selectOption('wide')
  await page.getByLabel('Time zone of local timestamps (optional)').fill('Europe/Berlin')
  await page.getByLabel('Values meaning "no value" (optional)').fill('888.8')
  await page.getByRole('button', { name: 'Read the tags' }).click()
}

async function seedHeatingPlant(c: ConsoleServer): Promise<void> {
  await c.must('POST', '/api/sites', { code: 'HEAT', name: 'Heating plant', location: 'Freiburg' })
  const ctl = await c.must<{ id?: string; controllerId?: string }>('POST', '/api/sites/HEAT/controllers', {
    name: 'PLC 1',
    platform: 0,
    assetNumber: 'PLC-1',
    connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.1' },
  })
  const controllerId = ctl.controllerId ?? ctl.id
  // HEAT-1 polls the flow temperature at the logger's column name (an address); HEAT-2 has a tag key `system`.
  await c.must('POST', '/api/sites/HEAT/instances', {
    id: 'HEAT-1',
    name: 'Solar circuit',
    typeId: 'heating',
    assetNumber: 'A-HEAT-1',
    controllerId,
    tagMappings: { flow_temp: 'temperatur_vorlauf' },
  })
  await c.must('POST', '/api/sites/HEAT/instances', {
    id: 'HEAT-2',
    name: 'Controller state',
    typeId: 'heating',
    assetNumber: 'A-HEAT-2',
    controllerId,
    tagMappings: { system: 'Program:Main.System' },
  })
}

describe('historian import with the mapping editor in headless Chromium', { concurrency: 2 }, () => {
  it('a site-PIN owner reads the tags of an export, sees the proposals, corrects them, has a refused mapping explained, imports, and reads the rejections by reason', async (t) => {
    const c = await siteConsole(t)
    await seedHeatingPlant(c)

    const page = await c.browser.page()
    await signInWithPin(page, c.origin, c.owner, '/historian?site=HEAT')
    await page.getByRole('heading', { name: 'Import an export' }).waitFor()
    await readTagsOfSample(page)

    // The dry run's tags, each with its proposal and why; nothing is stored yet.
    const row = (tag: string) => page.locator(`tr[data-historian-tag="${tag}"]`)
    await row('temperatur_vorlauf').waitFor()
    // 37 tag columns; temperatur_sensor_8 holds only the sentinel 888.8 (an open sensor): nothing to import, not listed.
    assert.equal(await page.locator('tr[data-historian-tag]').count(), 36, 'every tag of the header with a value')
    assert.equal(await row('temperatur_sensor_8').count(), 0)
    const proposal = async (tag: string) => [
      await row(tag).getByLabel(`Instance for ${tag}`).inputValue(),
      await row(tag).getByLabel(`Tag key for ${tag}`).inputValue(),
      ((await row(tag).locator('td').last().textContent()) ?? '').trim(),
    ]
    assert.deepEqual(await proposal('temperatur_vorlauf'), ['HEAT-1', 'flow_temp', 'controller address of HEAT-1 · flow_temp'])
    assert.deepEqual(await proposal('system'), ['HEAT-2', 'system', 'tag key of HEAT-2'])
    assert.deepEqual(await proposal('temperatur_sensor_1'), ['', 'temperatur_sensor_1', 'no match: choose an instance'])
    assert.equal(((await row('temperatur_sensor_1').locator('td').nth(1).textContent()) ?? '').trim(), '530', 'its values in the file, sentinels aside')
    await page.getByText('How a tag is proposed:').waitFor()
    const dry = await c.must<{ items: unknown[] }>('GET', '/api/historian/import-batches?siteId=HEAT')
    assert.equal(dry.items.length, 0, 'the dry run stored no batch')

    // Corrections: every tag without an instance to HEAT-1, one key renamed, one tag left out.
    await page.getByLabel('Instance for every tag without one').selectOption('HEAT-1')
    await page.getByRole('button', { name: 'Give every tag without an instance this one' }).click()
    assert.equal(await row('temperatur_sensor_2').getByLabel('Instance for temperatur_sensor_2').inputValue(), 'HEAT-1')
    assert.equal(await row('system').getByLabel('Instance for system').inputValue(), 'HEAT-2', 'a proposed instance stays')
    await row('temperatur_sensor_1').getByLabel('Tag key for temperatur_sensor_1').fill('collector_temp')
    await row('temperatur_sensor_1').getByLabel('Unit for temperatur_sensor_1').fill('°C')
    await row('drehzahl_relais_1').getByLabel('Instance for drehzahl_relais_1').selectOption('')
    assert.deepEqual(await seriousViolations(page), [], 'the editor has no serious or critical accessibility violation')
    await shot(page, 'historian-mapping-editor')

    // A refused mapping (a tag key emptied) is the API's answer, shown above the editor; nothing is stored.
    await row('schema').getByLabel('Tag key for schema').fill('')
    await page.getByRole('button', { name: 'Import', exact: true }).click()
    await page.getByRole('alert').filter({ hasText: 'tag_key is empty' }).waitFor()
    assert.equal((await c.must<{ items: unknown[] }>('GET', '/api/historian/import-batches?siteId=HEAT')).items.length, 0, 'a refused import stores nothing')
    await row('schema').getByLabel('Tag key for schema').fill('schema')

    await page.getByRole('button', { name: 'Import', exact: true }).click()
    assert.deepEqual(await rejectionsByReason(page), [["historian tag 'drehzahl_relais_1' is not in mapping_csv", '717']])
    await page.getByText('The 717 rejected rows listed').click()
    assert.equal(await page.getByRole('table', { name: 'Rejected rows' }).locator('tbody tr').count(), 717, 'then the rows')
    await page.getByText('717 rejected values.').waitFor()
    await page.locator('tr[data-status="complete"]').waitFor()
    assert.deepEqual(await seriousViolations(page), [], 'the imported batch, its rejections and its trend: no serious or critical violation')
    await page.getByText('The 717 rejected rows listed').click() // folded again for the screenshot
    await shot(page, 'historian-mapping-imported')

    // What the API stored is what the editor said.
    const list = await c.must<{ items: Array<{ id: string; status: string }> }>('GET', '/api/historian/import-batches?siteId=HEAT')
    assert.deepEqual(
      list.items.map((b) => b.status),
      ['complete'],
    )
    const batch = await c.must<BatchAnswer>('GET', `/api/historian/import-batches/${list.items[0]!.id}`)
    assert.equal(batch.rowsRejected, 717)
    assert.deepEqual(batch.unmappedTags, [{ tag: 'drehzahl_relais_1', rows: 717 }])
    const where = (tag: string) => batch.tags.find((x) => x.historianTag === tag)
    assert.deepEqual(
      ['temperatur_vorlauf', 'system', 'temperatur_sensor_1', 'wärmemenge'].map((tag) => {
        const x = where(tag)
        return [tag, x?.instanceId, x?.tagKey, x?.unit]
      }),
      [
        ['temperatur_vorlauf', 'HEAT-1', 'flow_temp', null],
        ['system', 'HEAT-2', 'system', null],
        ['temperatur_sensor_1', 'HEAT-1', 'collector_temp', '°C'],
        ['wärmemenge', 'HEAT-1', 'wärmemenge', null],
      ],
    )
    assert.equal(batch.tags.length, 35, 'the 36 listed but the one left out')

    // Another layout: the tags read no longer hold, the editor goes until they are read again.
    await page.getByLabel('Layout').selectOption('long')
    await page.getByRole('heading', { name: 'Where each tag goes' }).waitFor({ state: 'hidden' })
    assert.equal(await page.getByRole('button', { name: 'Import', exact: true }).isVisible(), false)
    // At 1 280 px the batch table fits its box (its long file name wraps): nothing to scroll sideways.
    const batchTable = page.locator('section[aria-labelledby="hist-batches"] .table-wrap')
    assert.deepEqual(
      await batchTable.evaluate((e) => e.scrollWidth <= e.clientWidth),
      true,
      `the batch table fits: ${await batchTable.evaluate((e) => `${e.scrollWidth} px in ${e.clientWidth}`)}`,
    )
    assert.deepEqual(page.errors, [], 'no script error and no CSP refusal')
  })

  it('cloud mode, an OIDC admin: reads the tags, corrects a proposal, imports, and reads the rejections by reason', async (t) => {
    const c = await cloudConsole(t)
    await seedHeatingPlant(c)
    const page = await c.browser.page()
    await signInWithProvider(page, c, 'ada', '/historian')
    await page.getByRole('heading', { name: 'Awaiting approval' }).waitFor()
    await c.approve('ada', 'admin')
    await page.getByRole('button', { name: 'Check again' }).click()
    await page.goto(`${c.origin}/historian?site=HEAT`)
    await page.getByRole('heading', { name: 'Import an export' }).waitFor()
    await readTagsOfSample(page)
    const row = (tag: string) => page.locator(`tr[data-historian-tag="${tag}"]`)
    await row('temperatur_vorlauf').waitFor()
    assert.equal(await row('temperatur_vorlauf').getByLabel('Instance for temperatur_vorlauf').inputValue(), 'HEAT-1', 'proposed by address')
    await page.getByLabel('Instance for every tag without one').selectOption('HEAT-2')
    await page.getByRole('button', { name: 'Give every tag without an instance this one' }).click()
    await row('drehzahl_relais_1').getByLabel('Instance for drehzahl_relais_1').selectOption('')
    await page.getByRole('button', { name: 'Import', exact: true }).click()
    assert.deepEqual(await rejectionsByReason(page), [["historian tag 'drehzahl_relais_1' is not in mapping_csv", '717']])
    await page.locator('tr[data-status="complete"]').waitFor()
    assert.deepEqual(await seriousViolations(page), [], 'axe: the imported batch in cloud mode')
    await shot(page, 'historian-mapping-imported-cloud')
    const list = await c.must<{ items: Array<{ id: string }> }>('GET', '/api/historian/import-batches?siteId=HEAT')
    const batch = await c.must<BatchAnswer>('GET', `/api/historian/import-batches/${list.items[0]!.id}`)
    assert.deepEqual([batch.status, batch.rowsRejected, batch.tags.length], ['complete', 717, 35])
    assert.equal(batch.tags.find((x) => x.historianTag === 'temperatur_sensor_1')?.instanceId, 'HEAT-2', 'the correction was imported')
    assert.deepEqual(page.errors, [], 'no script error and no CSP refusal')
  })
})
