import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { systemClock } from '../../src/clock.ts'
import { connectDatabase } from '../../src/db/connect.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { CLI_ACTOR } from '../../src/identity.ts'
import { createApiKeysService } from '../../src/modules/api-keys/service.ts'
import { LINK_PROTOCOL, SCHEMA_VERSION } from '../../src/modules/fleet/site-servers/protocol.ts'
import { createOrgsService } from '../../src/modules/orgs/service.ts'
import { httpRequest, runCliAsync, startServer } from '../cli/process.ts'
import { KEY_SECRET } from '../harness.ts'
import { expect } from './expect.ts'
import { cloudConsole, consoleServerEnv, shot, signInWithPin, signInWithProvider, type CloudConsole } from './support.ts'

// The fleet link in the consoles (issue 26), in a real headless Chromium against real `sitegrid serve` processes on
// SQLite: a cloud cell, a site server enrolled with it through `sitegrid link enrol`, and a second site server played
// by the test through the link API itself (enrol, pull, push, heartbeat) so that its state is exactly known.

type Change = { seq: number; tx: number; table: string; site: string; key: unknown[]; op: string; row: Record<string, unknown>; base: number | null }

/** A site server played through the link API of the cloud process: its credential, then link calls as the agent makes them. */
async function playedSiteServer(c: CloudConsole, code: string) {
  const host = `${c.slug}.localhost`
  const enrol = await httpRequest(`${c.server.url}/api/link/enrol`, {
    method: 'POST',
    headers: { host, 'content-type': 'application/json', 'sitegrid-link-protocol': String(LINK_PROTOCOL) },
    body: JSON.stringify({ code, orgId: null, protocol: LINK_PROTOCOL, schema: SCHEMA_VERSION }),
  })
  assert.equal(enrol.status, 200, enrol.body)
  const credential = (enrol.json() as { credential: string }).credential
  const link = async <T>(method: string, path: string, body?: unknown) => {
    const res = await httpRequest(`${c.server.url}${path}`, {
      method,
      headers: {
        host,
        authorization: `Bearer ${credential}`,
        'sitegrid-link-protocol': String(LINK_PROTOCOL),
        'sitegrid-schema': SCHEMA_VERSION,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    assert.ok(res.status >= 200 && res.status < 300, `${method} ${path}: ${res.status} ${res.body}`)
    return (res.body ? res.json() : undefined) as T
  }
  return { link }
}

/** An empty site server enrolled with the cloud by `sitegrid link enrol` (seeded from it), serving its console. */
async function enrolledSiteServer(t: TestContext, c: CloudConsole, code: string) {
  const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-console-site-'))
  t.after(() => rmSync(cwd, { recursive: true, force: true }))
  // A short long-poll: a new enrolment waits for the old credential's pull to end before the link goes on (its client
  // closes gracefully), up to the pull's wait (20 s by default), which a loaded machine pushed past the test's 30 s.
  const env: Record<string, string> = { ...consoleServerEnv(cwd), SITEGRID_LINK_HEARTBEAT_MS: '500', SITEGRID_LINK_PULL_WAIT_MS: '2000' }
  let handle = await connectDatabase(env.DATABASE_URL!, { poolSize: 1 })
  await migrateToLatest(handle.db)
  await handle.close()
  const enrolled = await runCliAsync(['link', 'enrol', '--cloud', c.origin, '--code', code], { cwd, env })
  assert.equal(enrolled.code, 0, enrolled.stderr)
  handle = await connectDatabase(env.DATABASE_URL!, { poolSize: 1 })
  let key: string
  try {
    const [org] = await createOrgsService({ handle, clock: systemClock }).list()
    key = (
      await createApiKeysService({ handle, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') }).mint(org!.id, CLI_ACTOR, {
        role: 'owner',
        name: 'test seed',
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      })
    ).plaintext
  } finally {
    await handle.close()
  }
  const server = await startServer({ cwd, env })
  t.after(() => server.stop())
  const owner = { email: 'owner@pit5.example', pin: '24681357', name: 'Pit 5 owner', role: 'owner' }
  const res = await httpRequest(`${server.url}/api/site/users`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ email: owner.email, displayName: owner.name, siteRole: 'owner', pin: owner.pin }),
  })
  assert.equal(res.status, 201, res.body)
  const call = async <T>(method: string, path: string, body?: unknown) => {
    const res = await httpRequest(`${server.url}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    assert.ok(res.status >= 200 && res.status < 300, `${method} ${path}: ${res.status} ${res.body}`)
    return res.json() as T
  }
  /** `sitegrid link enrol` again (a new code after a revoke): it resumes where it stopped. */
  const reenrol = async (newCode: string) => {
    const again = await runCliAsync(['link', 'enrol', '--cloud', c.origin, '--code', newCode], { cwd, env })
    assert.equal(again.code, 0, again.stderr)
  }
  return { server, owner, call, reenrol }
}

describe('fleet link in the consoles (headless Chromium)', () => {
  it('cloud: the fleet page shows each site server’s state and backlog, registers (code shown once), revokes, re-applies a conflict; records say which side changed them; a forwarded acknowledge is pending; a site server’s console shows its link', async (t) => {
    const c = await cloudConsole(t)
    for (const code of ['S1', 'S2', 'S3']) await c.must('POST', '/api/sites', { code, name: `Pit ${code}` })
    const plc = await c.must<{ id: string }>('POST', '/api/sites/S1/controllers', {
      name: 'PLC 1',
      platform: 1,
      assetNumber: 'A-1',
      connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.1' },
    })
    await c.must('POST', '/api/sites/S1/instances', { id: 'CV-1', name: 'Conveyor 1', typeId: 'conveyor', assetNumber: 'S1-CV-1', controllerId: plc.id })
    // An alarm raised while S1 was not linked yet (once linked, its alarms are the site server's).
    const raised = await c.must<{ results: Array<{ alarmId: string }> }>('POST', '/api/sites/S1/alarms/events', {
      events: [
        {
          eventId: 'ev-1',
          instanceId: 'CV-1',
          condition: 'belt_slip',
          priority: 'high',
          state: 'active',
          occurredAt: new Date(Date.now() - 60_000).toISOString(),
          message: 'Belt slip detected',
        },
      ],
    })
    const alarmId = raised.results[0]!.alarmId
    // S3 too: a controller, an instance and an alarm, before Pit 5 server is registered for it.
    const plc3 = await c.must<{ id: string }>('POST', '/api/sites/S3/controllers', {
      name: 'PLC 3',
      platform: 1,
      assetNumber: 'A-3',
      connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.3' },
    })
    await c.must('POST', '/api/sites/S3/instances', { id: 'CV-3', name: 'Conveyor 3', typeId: 'conveyor', assetNumber: 'S3-CV-3', controllerId: plc3.id })
    const raised3 = await c.must<{ results: Array<{ alarmId: string }> }>('POST', '/api/sites/S3/alarms/events', {
      events: [
        {
          eventId: 'ev-3',
          instanceId: 'CV-3',
          condition: 'overload',
          priority: 'medium',
          state: 'active',
          occurredAt: new Date(Date.now() - 60_000).toISOString(),
          message: 'Motor overload',
        },
      ],
    })
    const alarm3 = raised3.results[0]!.alarmId

    // Pit 3 server (S1): enrolled, pulled, one edit accepted, one lost, and a heartbeat: 7 changes waiting to go up.
    const pit3 = await c.must<{ id: string; enrolmentCode: string }>('POST', '/api/admin/site-servers', { name: 'Pit 3 server', sites: ['S1'] })
    const site = await playedSiteServer(c, pit3.enrolmentCode)
    const pulled = await site.link<{ changes: Change[]; next: { tx: number; seq: number } }>('GET', '/api/link/pull?tx=0&seq=0&limit=500&waitMs=0')
    const cloudVersion = (table: string, id: string) => pulled.changes.filter((x) => x.table === table && x.key[1] === id).at(-1)!
    const instance = cloudVersion('instances', 'CV-1')
    const controller = cloudVersion('controllers', plc.id)
    // The cloud renames the controller after the version the site holds: the site's rename will lose.
    await c.must('PUT', `/api/sites/S1/controllers/${plc.id}`, { name: 'PLC 1 (cloud)' })
    const pushed = await site.link<{ applied: number; conflicts: number }>('POST', '/api/link/push', {
      epoch: 'e1',
      after: { tx: 0, seq: 0 },
      changes: [
        { ...instance, seq: 1, tx: 0, row: { ...instance.row, name: 'Conveyor 1 (site)' }, base: instance.seq, origin: '', at: Date.now() },
        { ...controller, seq: 2, tx: 0, row: { ...controller.row, name: 'PLC 1 (site)' }, base: controller.seq, origin: '', at: Date.now() },
      ],
    })
    assert.deepEqual([pushed.applied, pushed.conflicts], [1, 1])
    await site.link('PUT', '/api/link/heartbeat', {
      state: 'online',
      lastError: null,
      backlog: { items: 7, bytes: 2048, oldestAt: Date.now() - 120_000 },
      pulledTo: pulled.next,
    })
    // Pit 4 server (S2): registered, never enrolled.
    const pit4 = await c.must<{ id: string }>('POST', '/api/admin/site-servers', { name: 'Pit 4 server', sites: ['S2'] })

    const page = await c.browser.page()
    await signInWithProvider(page, c, 'ada', '/admin/fleet')
    await page.getByRole('heading', { name: 'Awaiting approval' }).waitFor()
    await c.approve('ada', 'owner')
    await page.getByRole('button', { name: 'Check again' }).click()
    await page.getByRole('heading', { name: 'Fleet', level: 1 }).waitFor()
    const row3 = page.locator(`tr[data-server-id="${pit3.id}"]`)
    const row4 = page.locator(`tr[data-server-id="${pit4.id}"]`)
    await row3.waitFor()
    assert.equal(await row3.getAttribute('data-status'), 'enrolled')
    assert.equal(await row3.getAttribute('data-connection'), 'online')
    assert.match((await row3.locator('td[data-label="Connection"]').textContent()) ?? '', /Online/)
    assert.match((await row3.locator('td[data-label="Waiting to go up"]').textContent()) ?? '', /7 changes, 2\.0 KiB/)
    // The reported oldest change (sent in epoch ms, answered as a date-time) shows as a time about two minutes ago.
    const oldest = Date.parse((await row3.locator('td[data-label="Waiting to go up"] time').getAttribute('datetime')) ?? '')
    assert.ok(Date.now() - oldest >= 120_000 && Date.now() - oldest < 600_000, String(oldest))
    // Down: the cloud's rename and the conflict record, made after the position it reported.
    assert.equal(await row3.locator('td[data-label="Waiting to go down"] [data-backlog]').getAttribute('data-backlog'), '2')
    assert.equal(await row4.getAttribute('data-status'), 'registered')
    assert.match((await row4.locator('td[data-label="Connection"]').textContent()) ?? '', /Never connected/)
    assert.match((await row4.locator('td[data-label="Waiting to go up"]').textContent()) ?? '', /Not reported yet/)
    await shot(page, 'fleet')

    // Register Pit 5 server for S3: the code and the enrol command are shown once.
    await page.getByLabel('Name', { exact: true }).fill('Pit 5 server')
    await page.getByLabel('S3 — Pit S3').check()
    await page.getByRole('button', { name: 'Register site server' }).click()
    const codeInput = page.locator('#enrolment-code')
    await codeInput.waitFor()
    const code = await codeInput.inputValue()
    assert.match(code, /^sle_[0-9A-Za-z]{32}$/)
    assert.equal(await page.locator('#enrol-command').inputValue(), `sitegrid link enrol --cloud ${c.origin} --code ${code}`)
    await page.getByRole('button', { name: 'I have copied it — hide the code' }).click()
    await expect(async () => (await page.locator('#enrolment-code').count()) === 0, 'the code is hidden')
    await page.reload()
    await page.locator('td[data-label="Site server"]', { hasText: 'Pit 5 server' }).waitFor()
    assert.ok(!(await page.content()).includes(code), 'never shown again')
    const servers = await c.must<{ items: Array<{ id: string; name: string; status: string }> }>('GET', '/api/admin/site-servers')
    const pit5 = servers.items.find((s) => s.name === 'Pit 5 server')!
    assert.equal(pit5.status, 'registered')

    // Revoke Pit 4 server after the confirmation.
    await page.getByRole('button', { name: 'Revoke Pit 4 server' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke site server' }).click()
    await expect(async () => (await row4.getAttribute('data-status')) === 'revoked', 'Pit 4 server shows revoked')
    assert.equal((await c.must<{ status: string }>('GET', `/api/admin/site-servers/${pit4.id}`)).status, 'revoked')

    // The conflict: both versions side by side, the name differing; re-applied, the site's version is the cloud's now.
    const conflict = page.locator('article.conflict')
    await conflict.waitFor()
    assert.equal(await conflict.count(), 1)
    assert.match((await conflict.textContent()) ?? '', /site server Pit 3 server changed it/)
    const nameRow = conflict.locator('tr[data-field="name"]')
    assert.equal(await nameRow.getAttribute('data-differs'), 'true')
    assert.equal(await nameRow.locator('td[data-side="site"]').textContent(), 'PLC 1 (site)')
    assert.equal(await nameRow.locator('td[data-side="cloud"]').textContent(), 'PLC 1 (cloud)')
    assert.equal(await conflict.locator('tr[data-field="ip_address"]').getAttribute('data-differs'), 'false')
    await shot(page, 'fleet-conflict')
    await conflict.getByRole('button', { name: /Re-apply the site's version/ }).click()
    await page.getByText('No conflicts to review.').waitFor()
    assert.equal((await c.must<{ name: string }>('GET', `/api/sites/S1/controllers/${plc.id}`)).name, 'PLC 1 (site)')
    const settled = await c.must<{ items: Array<{ resolution: string }> }>('GET', '/api/link/conflicts')
    assert.deepEqual(
      settled.items.map((x) => x.resolution),
      ['reapplied'],
    )

    // Which side last changed each record: the instance by Pit 3 server, the controller here (the re-apply), the site here.
    await page.goto(`${c.origin}/sites/S1`)
    const instanceRow = page.locator('tr[data-instance-id="CV-1"]')
    await expect(async () => /Last changed on site server Pit 3 server/.test((await instanceRow.textContent()) ?? ''), 'the instance names Pit 3 server')
    const controllerRow = page.locator(`tr[data-controller-id="${plc.id}"]`)
    await expect(async () => /Last changed in the cloud/.test((await controllerRow.textContent()) ?? ''), 'the controller was last changed in the cloud')
    await expect(
      async () => /Last changed in the cloud/.test((await page.locator('section[aria-labelledby="site-fields"]').textContent()) ?? ''),
      'the site too',
    )
    await shot(page, 'site-last-change')

    // Acknowledging S1's alarm in the cloud forwards it: the console says it is pending on the site server.
    await page.goto(`${c.origin}/alarms?site=S1`)
    const alarmRow = page.locator(`tr[data-alarm-id="${alarmId}"]`)
    await alarmRow.getByRole('button', { name: 'Acknowledge CV-1 belt_slip' }).click()
    await page.getByRole('status').filter({ hasText: 'Acknowledge of CV-1 belt_slip sent to the site server — pending' }).waitFor()
    assert.ok(!((await page.getByRole('status').textContent()) ?? '').includes('Acknowledged'))
    await expect(async () => (await alarmRow.locator('.pending-badge').getAttribute('data-pending')) === '1', 'the row shows one pending action')
    assert.equal(await alarmRow.getAttribute('data-state'), 'active_unacknowledged', 'not applied in the cloud')
    assert.equal(await alarmRow.getByRole('button', { name: 'Acknowledge CV-1 belt_slip' }).count(), 0, 'no second acknowledge while one is on its way')
    await alarmRow.getByRole('button', { name: 'Details of CV-1 belt_slip' }).click()
    const command = page.locator('.alarm-detail tr[data-command-id]')
    await command.waitFor()
    assert.equal(await command.getAttribute('data-status'), 'pending')
    assert.match((await command.textContent()) ?? '', /Acknowledge.*Pending on the site server/)
    await shot(page, 'alarm-forwarded')
    assert.deepEqual(page.errors, [])

    // Pit 5 server enrols with the code shown above (`sitegrid link enrol`), is seeded with S3, and shows its link.
    const pit5Site = await enrolledSiteServer(t, c, code)
    const sitePage = await c.browser.page()
    await signInWithPin(sitePage, pit5Site.server.url, pit5Site.owner, '/link')
    await sitePage.getByRole('heading', { name: 'Cloud link', level: 1 }).waitFor()
    await expect(async () => (await sitePage.locator('[data-link-state]').getAttribute('data-link-state')) === 'online', 'the site’s link is online')
    const panel = (await sitePage.locator('section[aria-labelledby="link-status-heading"]').textContent()) ?? ''
    assert.match(panel, new RegExp(c.origin.replace(/[.]/g, '\\.')))
    assert.match(panel, /S3/)
    assert.match(panel, new RegExp(pit5.id))
    assert.match(panel, /Unresolved conflicts0/)
    await shot(sitePage, 'site-link')
    // The fleet page sees it enrolled and online (its heartbeat).
    await page.goto(`${c.origin}/admin/fleet`)
    const row5 = page.locator(`tr[data-server-id="${pit5.id}"]`)
    await expect(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click()
      return (await row5.getAttribute('data-status')) === 'enrolled' && (await row5.getAttribute('data-connection')) === 'online'
    }, 'Pit 5 server is enrolled and online in the fleet page')

    // Two acknowledgements of S3's alarm from the cloud: Pit 5 server applies the first and refuses the second (the
    // state moved on); the alarm's details in the cloud say so, with the reason.
    for (let i = 0; i < 2; i++) assert.equal((await c.call('POST', `/api/sites/S3/alarms/${alarm3}/acknowledge`, {})).status, 202)
    const commandsOf3 = () => c.must<{ items: Array<{ status: string }> }>('GET', `/api/sites/S3/alarms/${alarm3}/commands`)
    await expect(async () => (await commandsOf3()).items.map((x) => x.status).join() === 'applied,refused', 'Pit 5 server settled both', 30_000)
    await page.goto(`${c.origin}/alarms?site=S3`)
    const row3a = page.locator(`tr[data-alarm-id="${alarm3}"]`)
    await row3a.getByRole('button', { name: 'Details of CV-3 overload' }).click()
    const settledRows = page.locator('.alarm-detail tr[data-command-id]')
    await expect(async () => (await settledRows.count()) === 2, 'both commands are listed')
    assert.equal(await settledRows.nth(0).getAttribute('data-status'), 'applied')
    assert.match((await settledRows.nth(0).textContent()) ?? '', /Applied/)
    assert.equal(await settledRows.nth(1).getAttribute('data-status'), 'refused')
    assert.match((await settledRows.nth(1).textContent()) ?? '', /Refused.*AlarmStateConflict/)
    await shot(page, 'alarm-commands-settled')

    // A record edited on both sides while apart: the cloud keeps its version and the site's console shows the
    // conflict the cloud recorded (read-only there). Apart: the cloud revokes Pit 5 server, both edit, it re-enrols.
    const plc5 = await c.must<{ id: string }>('POST', '/api/sites/S3/controllers', {
      name: 'PLC 5',
      platform: 1,
      assetNumber: 'A-5',
      connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.5' },
    })
    const onSite = () => pit5Site.call<{ items: Array<{ id: string; name: string }> }>('GET', '/api/sites/S3/controllers')
    await expect(async () => (await onSite()).items.some((x) => x.id === plc5.id), 'the controller reached the site server')
    await c.must('POST', `/api/admin/site-servers/${pit5.id}/revoke`)
    await expect(async () => (await pit5Site.call<{ state: string }>('GET', '/api/link')).state === 'revoked', 'the site server knows it is revoked')
    await c.must('PUT', `/api/sites/S3/controllers/${plc5.id}`, { name: 'PLC 5 (cloud)' })
    await pit5Site.call('PUT', `/api/sites/S3/controllers/${plc5.id}`, { name: 'PLC 5 (site)' })
    await pit5Site.reenrol((await c.must<{ enrolmentCode: string }>('POST', `/api/admin/site-servers/${pit5.id}/enrolment-code`)).enrolmentCode)
    await expect(
      async () => (await pit5Site.call<{ unresolvedConflicts: number }>('GET', '/api/link')).unresolvedConflicts === 1,
      'the conflict came down to the site server',
      30_000,
    )
    await sitePage.reload()
    const siteConflict = sitePage.locator('article.conflict')
    await siteConflict.waitFor()
    assert.equal(await siteConflict.locator('tr[data-field="name"] td[data-side="site"]').textContent(), 'PLC 5 (site)')
    assert.equal(await siteConflict.locator('tr[data-field="name"] td[data-side="cloud"]').textContent(), 'PLC 5 (cloud)')
    assert.equal(await siteConflict.getByRole('button').count(), 0, 'read-only on a site server')
    assert.match((await siteConflict.textContent()) ?? '', /Site S3: this site server changed it/)
    await expect(async () => (await onSite()).items.find((x) => x.id === plc5.id)?.name === 'PLC 5 (cloud)', "the cloud's version came down")
    await shot(sitePage, 'site-link-conflict')
    assert.deepEqual(sitePage.errors, [])
  })
})
