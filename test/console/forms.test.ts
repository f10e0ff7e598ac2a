import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Locator, Page } from 'playwright-core'
import { expect } from './expect.ts'
import { cloudConsole, shot, signInWithPin, signInWithProvider, siteConsole } from './support.ts'

// The console's create/edit/delete forms (issue 28) in headless Chromium against a real `sitegrid serve`: each form
// sends what was typed, and the API's own problem messages appear next to the fields (the API's validation is tested
// on both databases in its modules; these walks use the site server's SQLite).

/** The message shown next to the field of `pointer` in `scope`, once there is one. */
async function fieldError(scope: Locator, pointer: string): Promise<string> {
  const line = scope.locator(`[data-pointer="${pointer}"] .field-error`)
  await line.filter({ hasText: /\S/ }).waitFor()
  return (await line.textContent()) ?? ''
}

const dialogNamed = (page: Page, name: string | RegExp) => page.getByRole('dialog', { name })

describe('console forms in headless Chromium', { concurrency: 2 }, () => {
  it('site mode, site-PIN owner: site, controller (route and poll budget while typing), instance, bulk CSV dry run then apply — create, refused value, fix, delete', async (t) => {
    const c = await siteConsole(t)
    const page = await c.browser.page()
    await signInWithPin(page, c.origin, c.owner)

    // Site: create. Nothing is checked by hand: an empty name and a bad code are the API's messages, next to their fields.
    await page.getByRole('button', { name: 'New site' }).click()
    let dialog = dialogNamed(page, 'New site')
    await dialog.getByLabel('Code', { exact: true }).fill('plant 2')
    await dialog.getByRole('button', { name: 'Create site' }).click()
    const api = await c.call<{ errors: Array<{ pointer: string; message: string }> }>('POST', '/api/sites', { code: 'plant 2', name: '' })
    assert.equal(api.status, 400)
    for (const pointer of ['/code', '/name']) {
      assert.equal(await fieldError(dialog, pointer), api.body.errors.find((e) => e.pointer === pointer)?.message, `the API's message for ${pointer}`)
    }
    await shot(page, 'form-site-create-refused')
    await dialog.getByLabel('Code', { exact: true }).fill('PLANT-2')
    await dialog.getByLabel('Name', { exact: true }).fill('Crusher plant')
    await dialog.getByLabel('Location').fill('Hunter Valley')
    await dialog.getByRole('button', { name: 'Create site' }).click()
    await page.waitForURL((u) => u.pathname === '/sites/PLANT-2')
    await page.getByRole('heading', { name: 'Crusher plant (PLANT-2)', level: 1 }).waitFor()
    assert.equal((await c.must<{ timeZone: string }>('GET', '/api/sites/PLANT-2')).timeZone, 'UTC', 'an empty time zone is absent: the default')

    // Site: edit with a refused time zone, then fixed.
    await page.getByRole('button', { name: 'Edit site' }).click()
    dialog = dialogNamed(page, 'Edit site PLANT-2')
    await dialog.getByLabel('Time zone').fill('Mars/Olympus')
    await dialog.getByRole('button', { name: 'Save site' }).click()
    const tzProblem = await c.call<{ errors: Array<{ message: string }> }>('PUT', '/api/sites/PLANT-2', { timeZone: 'Mars/Olympus' })
    assert.equal(await fieldError(dialog, '/timeZone'), tzProblem.body.errors[0]?.message)
    await shot(page, 'form-site-edit-refused')
    await dialog.getByLabel('Time zone').fill('Australia/Sydney')
    await dialog.getByLabel('Status').selectOption({ label: 'Commissioning' })
    await dialog.getByRole('button', { name: 'Save site' }).click()
    await dialog.waitFor({ state: 'detached' })
    await page.locator('dd').filter({ hasText: 'Australia/Sydney' }).waitFor()
    assert.deepEqual(
      await page
        .locator('dt')
        .filter({ hasText: /^(Created|Updated)$/ })
        .evaluateAll((dts) => dts.map((dt) => dt.nextElementSibling?.querySelector('time')?.getAttribute('data-zone'))),
      ['Australia/Sydney', 'Australia/Sydney'],
      "the site's created and updated times are in its zone",
    )
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Edit site', 'the focus went back to the button')
    const site = await c.must<{ timeZone: string; status: number; location: string | null }>('GET', '/api/sites/PLANT-2')
    assert.deepEqual([site.timeZone, site.status, site.location], ['Australia/Sydney', 1, 'Hunter Valley'])

    // Controller: create; a malformed CIP path is answered next to its field while typing (the API's dry run),
    // the route in words once it is right.
    await page.getByRole('button', { name: 'New controller' }).click()
    dialog = dialogNamed(page, 'New controller')
    await dialog.getByLabel('Name', { exact: true }).fill('Stacker PLC')
    await dialog.getByLabel('Asset number').fill('PLC-ST-1')
    await dialog.getByLabel('IP address or host name').fill('10.0.0.9')
    await dialog.getByLabel('CIP path').fill('1,17')
    assert.match(await fieldError(dialog, '/connection/cipPath'), /hop 1/)
    assert.equal(await dialog.locator('.field-error:not([hidden])').count(), 1, 'only the field being typed is judged while typing')
    assert.equal((await c.must<{ items: unknown[] }>('GET', '/api/sites/PLANT-2/controllers')).items.length, 0, 'the dry run wrote nothing')
    await shot(page, 'form-controller-refused')
    await dialog.getByLabel('CIP path').fill('2,10.0.0.5,1,0')
    await dialog.locator('.cip-route').filter({ hasText: 'out port 2 (Ethernet) to 10.0.0.5, then backplane, slot 0' }).waitFor()
    await expect(async () => (await dialog.locator('.field-error:not([hidden])').count()) === 0, 'the fixed path clears its message')
    await dialog.getByRole('button', { name: 'Create controller' }).click()
    await dialog.waitFor({ state: 'detached' })
    const controllers = await c.must<{ items: Array<{ id: string; connection: { cipPath: string; timeoutMs: number } }> }>(
      'GET',
      '/api/sites/PLANT-2/controllers',
    )
    assert.equal(controllers.items.length, 1)
    const ctl = controllers.items[0]!
    assert.equal(ctl.connection.cipPath, '2,10.0.0.5,1,0')
    await page.locator(`tr[data-controller-id="${ctl.id}"]`).waitFor()

    // Instance: create with tag mappings that are not JSON (sent as typed: the API names the field), then fixed.
    await page.getByRole('button', { name: 'New instance' }).click()
    dialog = dialogNamed(page, 'New instance')
    await dialog.getByLabel('Id', { exact: true }).fill('CV-1')
    await dialog.getByLabel('Name', { exact: true }).fill('Conveyor 1')
    await dialog.getByLabel('Type', { exact: true }).fill('conveyor')
    await dialog.getByLabel('Asset number').fill('A-CV-1')
    await dialog.getByLabel('Controller').selectOption({ label: 'Stacker PLC (PLC-ST-1)' })
    await dialog.getByLabel('Tag mappings (JSON)').fill('running = Program:Main.CV1.Run')
    await dialog.getByRole('button', { name: 'Create instance' }).click()
    assert.notEqual(await fieldError(dialog, '/tagMappings'), '')
    await shot(page, 'form-instance-refused')
    await dialog.getByLabel('Tag mappings (JSON)').fill('{"running": "Program:Main.CV1.Run"}')
    await dialog.getByRole('button', { name: 'Create instance' }).click()
    await dialog.waitFor({ state: 'detached' })
    await page.locator('tr[data-instance-id="CV-1"]').waitFor()

    // Controller: edit; its instance's tag makes a slow failure detection a warning as soon as the timeout is typed.
    await page.getByRole('button', { name: 'Edit Stacker PLC' }).click()
    dialog = dialogNamed(page, 'Edit Stacker PLC')
    await dialog.locator('.cip-route').waitFor()
    assert.equal(await dialog.locator('.poll-warnings li').count(), 0)
    await dialog.getByLabel('Timeout (ms)').fill('30000')
    await dialog.locator('.poll-warnings li[data-code="SlowFailureDetection"]').waitFor()
    await shot(page, 'form-controller-edit-warning')
    await dialog.getByLabel('Retries', { exact: true }).fill('11')
    assert.notEqual(await fieldError(dialog, '/connection/maxRetries'), '')
    await shot(page, 'form-controller-edit-refused')
    await dialog.getByLabel('Retries', { exact: true }).fill('2')
    await dialog.getByRole('button', { name: 'Save controller' }).click()
    await dialog.waitFor({ state: 'detached' })
    const edited = await c.must<{ connection: { timeoutMs: number; maxRetries: number }; pollBudget: { warnings: Array<{ code: string }> } }>(
      'GET',
      `/api/sites/PLANT-2/controllers/${ctl.id}`,
    )
    assert.deepEqual([edited.connection.timeoutMs, edited.connection.maxRetries], [30000, 2])
    assert.deepEqual(
      edited.pollBudget.warnings.map((w) => w.code),
      ['SlowFailureDetection'],
    )

    // Instance: edit.
    await page.getByRole('button', { name: 'Edit instance CV-1' }).click()
    dialog = dialogNamed(page, 'Edit instance CV-1')
    await dialog.getByLabel('Area').fill('Stockpile')
    await dialog.getByRole('button', { name: 'Save instance' }).click()
    await dialog.waitFor({ state: 'detached' })
    await page.locator('tr[data-instance-id="CV-1"]').filter({ hasText: 'Stockpile' }).waitFor()

    // Bulk CSV: the dry run's report as a table before Apply; a refused line keeps everything as it was.
    const header = 'id,name,typeId,assetNumber,controllerId,area,tag:running'
    const bad = `${header}\nCV-2,Conveyor 2,conveyor,A-CV-2,${ctl.id},Stockpile,Program:Main.CV2.Run\nCV-3,Conveyor 3,conveyor,A-CV-3,ctl_nope,,\n`
    await page.getByRole('button', { name: 'Upload CSV' }).click()
    dialog = dialogNamed(page, 'Upload instances (CSV)')
    await dialog.getByLabel('CSV file').setInputFiles({ name: 'instances.csv', mimeType: 'text/csv', buffer: Buffer.from(bad) })
    await dialog.locator('tr[data-line="3"][data-outcome="refused"]').waitFor()
    assert.equal(await dialog.locator('tr[data-line="2"]').getAttribute('data-outcome'), 'created')
    await shot(page, 'form-instances-bulk-dry-run')
    await dialog.getByRole('button', { name: 'Apply' }).click()
    await dialog.getByRole('alert').waitFor()
    assert.equal((await c.must<{ items: unknown[] }>('GET', '/api/sites/PLANT-2/instances')).items.length, 1, 'neither the dry run nor the refused apply wrote')
    const good = `${header}\nCV-2,Conveyor 2,conveyor,A-CV-2,${ctl.id},Stockpile,Program:Main.CV2.Run\nCV-1,Conveyor 1,conveyor,A-CV-1,${ctl.id},Stockpile,Program:Main.CV1.Run\n`
    await dialog.getByLabel('CSV file').setInputFiles({ name: 'instances.csv', mimeType: 'text/csv', buffer: Buffer.from(good) })
    await dialog.locator('.bulk-counts').filter({ hasText: '1 to create, 0 to replace, 1 unchanged, 0 refused' }).waitFor()
    await dialog.getByRole('button', { name: 'Apply' }).click()
    await dialog.waitFor({ state: 'detached' })
    await page.locator('tr[data-instance-id="CV-2"]').waitFor()

    // Deletes: the controller is refused while instances use it (the API's 409 in the dialog); then each goes.
    await page.getByRole('button', { name: 'Delete Stacker PLC' }).click()
    dialog = dialogNamed(page, 'Delete Stacker PLC?')
    await dialog.getByRole('button', { name: 'Delete controller' }).click()
    await dialog
      .getByRole('alert')
      .filter({ hasText: /instance/i })
      .waitFor()
    await shot(page, 'form-controller-delete-refused')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    for (const id of ['CV-1', 'CV-2']) {
      await page.getByRole('button', { name: `Delete instance ${id}` }).click()
      await dialogNamed(page, `Delete instance ${id}?`).getByRole('button', { name: 'Delete instance' }).click()
      await page.locator(`tr[data-instance-id="${id}"]`).waitFor({ state: 'detached' })
    }
    await page.getByRole('button', { name: 'Delete Stacker PLC' }).click()
    await dialogNamed(page, 'Delete Stacker PLC?').getByRole('button', { name: 'Delete controller' }).click()
    await page.locator(`tr[data-controller-id="${ctl.id}"]`).waitFor({ state: 'detached' })

    // Site: the delete shows the API's preview and needs the code typed; a wrong one is the API's refusal.
    await c.must('POST', '/api/sites/PLANT-2/controllers', {
      name: 'Spare',
      platform: 0,
      assetNumber: 'SP-1',
      connection: { protocol: 'modbus', ipAddress: '10.0.0.3' },
    })
    await page.getByRole('button', { name: 'Delete site' }).click()
    dialog = dialogNamed(page, 'Delete site PLANT-2?')
    await dialog.locator('li[data-kind="controllers"]').filter({ hasText: 'controllers: 1' }).waitFor()
    await dialog.getByLabel(/Type the site's code/).fill('PLANT-3')
    await dialog.getByRole('button', { name: 'Delete site' }).click()
    await dialog.getByRole('alert').filter({ hasText: 'confirm=PLANT-2' }).waitFor()
    await shot(page, 'form-site-delete-refused')
    assert.equal((await c.call('GET', '/api/sites/PLANT-2')).status, 200, 'a wrong code deletes nothing')
    await dialog.getByLabel(/Type the site's code/).fill('PLANT-2')
    await dialog.getByRole('button', { name: 'Delete site' }).click()
    await page.waitForURL((u) => u.pathname === '/sites')
    assert.equal((await c.call('GET', '/api/sites/PLANT-2')).status, 404)
    assert.deepEqual(page.errors, [], 'no script error and no CSP refusal')
  })

  it('cloud mode, OIDC admin: a domain binding (refused, fixed, enabled, removed), a member approval (a role above the caller refused by the API), then site, controller and instance — create, refused value, fix, edit, delete', async (t) => {
    const c = await cloudConsole(t)
    const page = await c.browser.page()
    await signInWithProvider(page, c, 'ada', '/admin/domains')
    await page.getByRole('heading', { name: 'Awaiting approval' }).waitFor()
    await c.approve('ada', 'admin')
    await page.getByRole('button', { name: 'Check again' }).click()
    await page.getByRole('heading', { name: 'Domain bindings', level: 1 }).waitFor()

    await page.getByLabel('Domain', { exact: true }).fill('plant..example.com')
    await page.getByRole('button', { name: 'Bind domain' }).click()
    assert.notEqual(await fieldError(page.locator('form.inline-form'), '/domain'), '')
    await shot(page, 'form-domain-refused')
    await page.getByLabel('Domain', { exact: true }).fill('plant.example.com')
    await page.getByRole('button', { name: 'Bind domain' }).click()
    const row = page.locator('tr[data-domain="plant.example.com"]')
    await row.filter({ hasText: 'Disabled' }).waitFor()
    await row.getByRole('button', { name: 'Enable plant.example.com' }).click()
    await row.filter({ hasText: 'Enabled' }).waitFor()
    await row.getByRole('button', { name: 'Remove plant.example.com' }).click()
    await dialogNamed(page, 'Remove plant.example.com?').getByRole('button', { name: 'Remove binding' }).click()
    await row.waitFor({ state: 'detached' })
    assert.deepEqual((await c.must<{ items: unknown[] }>('GET', `/api/admin/orgs/${c.slug}/domains`)).items, [])

    // Bob asks to join; the admin approves him: owner is above an admin (the API's 403, shown in the dialog), member is not.
    const bobPage = await c.browser.page()
    await signInWithProvider(bobPage, c, 'bob')
    await bobPage.getByRole('heading', { name: 'Awaiting approval' }).waitFor()
    await page.getByRole('link', { name: 'Members' }).click()
    const bob = page.locator(`tr[data-account-id="${c.oidOf('bob')}"][data-status="pending"]`)
    await bob.getByRole('button', { name: 'Approve' }).click()
    const dialog = dialogNamed(page, /^Approve /)
    await dialog.getByLabel('Role').selectOption('owner')
    await dialog.getByRole('button', { name: 'Approve' }).click()
    await dialog.getByRole('alert').filter({ hasText: 'above the role of the caller' }).waitFor()
    await shot(page, 'form-member-approve-refused')
    await dialog.getByLabel('Role').selectOption('member')
    await dialog.getByRole('button', { name: 'Approve' }).click()
    await page.locator(`tr[data-account-id="${c.oidOf('bob')}"][data-status="active"]`).waitFor()
    const members = await c.must<{ items: Array<{ accountId: string; role: string }> }>('GET', `/api/admin/orgs/${c.slug}/members`)
    assert.equal(members.items.find((m) => m.accountId === c.oidOf('bob'))?.role, 'member')

    // The plant's records, as the OIDC admin: site, controller and instance each created with a value the API
    // refuses (its message next to the field), fixed, edited, and deleted (the site with its code typed).
    await page.getByRole('link', { name: 'Sites' }).click()
    await page.getByRole('button', { name: 'New site' }).click()
    let form = dialogNamed(page, 'New site')
    await form.getByLabel('Code', { exact: true }).fill('PIT 4')
    await form.getByLabel('Name', { exact: true }).fill('North pit')
    await form.getByRole('button', { name: 'Create site' }).click()
    const codeProblem = await c.call<{ errors: Array<{ pointer: string; message: string }> }>('POST', '/api/sites', { code: 'PIT 4', name: 'North pit' })
    assert.equal(await fieldError(form, '/code'), codeProblem.body.errors.find((e) => e.pointer === '/code')?.message)
    await shot(page, 'form-site-create-refused-cloud')
    await form.getByLabel('Code', { exact: true }).fill('PIT-4')
    await form.getByRole('button', { name: 'Create site' }).click()
    await page.waitForURL((u) => u.pathname === '/sites/PIT-4')
    await page.getByRole('button', { name: 'Edit site' }).click()
    form = dialogNamed(page, 'Edit site PIT-4')
    await form.getByLabel('Location').fill('Pilbara')
    await form.getByRole('button', { name: 'Save site' }).click()
    await form.waitFor({ state: 'detached' })
    await page.locator('dd').filter({ hasText: 'Pilbara' }).waitFor()

    await page.getByRole('button', { name: 'New controller' }).click()
    form = dialogNamed(page, 'New controller')
    await form.getByLabel('Name', { exact: true }).fill('Shovel PLC')
    await form.getByLabel('Asset number').fill('PLC-SH-4')
    await form.getByLabel('IP address or host name').fill('10.4.0.9')
    await form.getByLabel('CIP path').fill('1,17')
    assert.match(await fieldError(form, '/connection/cipPath'), /hop 1/)
    await form.getByLabel('CIP path').fill('1,0')
    await form.locator('.cip-route').waitFor()
    await form.getByRole('button', { name: 'Create controller' }).click()
    await form.waitFor({ state: 'detached' })
    const [shovel] = (await c.must<{ items: Array<{ id: string }> }>('GET', '/api/sites/PIT-4/controllers')).items
    assert.ok(shovel, 'the controller was created')
    await page.locator(`tr[data-controller-id="${shovel.id}"]`).waitFor()

    await page.getByRole('button', { name: 'New instance' }).click()
    form = dialogNamed(page, 'New instance')
    await form.getByLabel('Id', { exact: true }).fill('SH-1')
    await form.getByLabel('Name', { exact: true }).fill('Shovel 1')
    await form.getByLabel('Type', { exact: true }).fill('shovel')
    await form.getByLabel('Asset number').fill('A-SH-1')
    await form.getByLabel('Controller').selectOption({ label: 'Shovel PLC (PLC-SH-4)' })
    await form.getByLabel('Tag mappings (JSON)').fill('["Program:Main.Hoist"]')
    await form.getByRole('button', { name: 'Create instance' }).click()
    assert.notEqual(await fieldError(form, '/tagMappings'), '')
    await form.getByLabel('Tag mappings (JSON)').fill('{"hoist": "Program:Main.Hoist"}')
    await form.getByRole('button', { name: 'Create instance' }).click()
    await form.waitFor({ state: 'detached' })
    await page.getByRole('button', { name: 'Edit instance SH-1' }).click()
    form = dialogNamed(page, 'Edit instance SH-1')
    await form.getByLabel('Area').fill('North bench')
    await form.getByRole('button', { name: 'Save instance' }).click()
    await form.waitFor({ state: 'detached' })
    await page.locator('tr[data-instance-id="SH-1"]').filter({ hasText: 'North bench' }).waitFor()
    await shot(page, 'site-records-cloud-admin')
    assert.deepEqual((await c.must<{ tagMappings: Record<string, string>; area: string }>('GET', '/api/sites/PIT-4/instances/SH-1')).tagMappings, {
      hoist: 'Program:Main.Hoist',
    })

    await page.getByRole('button', { name: 'Delete instance SH-1' }).click()
    await dialogNamed(page, 'Delete instance SH-1?').getByRole('button', { name: 'Delete instance' }).click()
    await page.locator('tr[data-instance-id="SH-1"]').waitFor({ state: 'detached' })
    await page.getByRole('button', { name: 'Delete Shovel PLC' }).click()
    await dialogNamed(page, 'Delete Shovel PLC?').getByRole('button', { name: 'Delete controller' }).click()
    await page.locator(`tr[data-controller-id="${shovel.id}"]`).waitFor({ state: 'detached' })
    await page.getByRole('button', { name: 'Delete site' }).click()
    form = dialogNamed(page, 'Delete site PIT-4?')
    await form.getByLabel(/Type the site's code/).fill('PIT-4')
    await form.getByRole('button', { name: 'Delete site' }).click()
    await page.waitForURL((u) => u.pathname === '/sites')
    assert.equal((await c.call('GET', '/api/sites/PIT-4')).status, 404)
    assert.deepEqual(page.errors, [], 'no script error and no CSP refusal')
  })
})
