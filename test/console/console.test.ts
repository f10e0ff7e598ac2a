import assert from 'node:assert/strict'
import { request } from 'node:http'
import { describe, it } from 'node:test'
import { expect } from './expect.ts'
import { cloudConsole, shot, signInWithPin, signInWithProvider, siteConsole } from './support.ts'

// The console in a real headless Chromium against a real `sitegrid serve` process on SQLite (the API itself is
// tested on both databases elsewhere). One server per mode; the steps of a mode share it and run in order; the two
// modes run side by side (most of their time is waiting on processes).

/** A wrong PIN for `email` from the loopback address `localAddress`; answers the status. */
function wrongPinFrom(localAddress: string, origin: string, email: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}/auth/site/login`, { method: 'POST', localAddress, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.end(JSON.stringify({ email, pin: '00000000' }))
  })
}

describe('web console in headless Chromium', { concurrency: 2 }, () => {
  describe('site mode (PIN sign-in)', () => {
    it('owner: PIN sign-in, keyboard-only navigation, the live alarm list with acknowledge and shelve, API keys, site users; a member sees no administration', async (t) => {
      const c = await siteConsole(t)
      await c.must('POST', '/api/sites', { code: 'CHPP-1', name: 'Coal handling plant 1', location: 'Hunter Valley' })
      const ctl = await c.must<{ id?: string; controllerId?: string }>('POST', '/api/sites/CHPP-1/controllers', {
        name: 'PLC 1',
        platform: 0,
        assetNumber: 'PLC-1',
        connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.1' },
      })
      await c.must('POST', '/api/sites/CHPP-1/instances', {
        id: 'CV-101',
        name: 'Conveyor 101',
        typeId: 'conveyor',
        assetNumber: 'A-CV-101',
        controllerId: ctl.controllerId ?? ctl.id,
      })

      const page = await c.browser.page()
      // A bookmark of a console page while signed out: the sign-in form, then that page.
      await page.goto(`${c.origin}/sites`)
      await expect(() => page.getByRole('heading', { name: 'Sign in to sitegrid' }).isVisible(), 'the sign-in page is shown')
      await shot(page, 'sign-in-site')
      // A wrong PIN is answered next to the form, and nothing else happens.
      await page.getByLabel('E-mail').fill(c.owner.email)
      await page.getByLabel('PIN', { exact: true }).fill('00000000')
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('alert').filter({ hasText: 'The e-mail or the PIN is wrong.' }).waitFor()
      await signInWithPin(page, c.origin, c.owner)
      assert.equal(new URL(page.url()).pathname, '/sites')
      await page.getByRole('link', { name: 'CHPP-1' }).waitFor()
      assert.equal(await page.locator('.who-name').textContent(), c.owner.name, 'the shell names who is signed in (GET /api/me)')
      await shot(page, 'sites')

      // Keyboard only: Tab from the top of the page to the "Alarms" link, Enter opens it and the focus moves to the page.
      await page.reload()
      await page.getByRole('link', { name: 'CHPP-1' }).waitFor()
      let reached = false
      for (let i = 0; i < 12 && !reached; i++) {
        await page.keyboard.press('Tab')
        reached = await page.evaluate(() => document.activeElement?.textContent === 'Alarms' && document.activeElement.tagName === 'A')
      }
      assert.ok(reached, 'the Alarms link is reachable with Tab')
      const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)
      assert.notEqual(outline, 'none', 'the keyboard focus is visible')
      await page.keyboard.press('Enter')
      await page.waitForURL((u) => u.pathname === '/alarms')
      await page.getByRole('heading', { name: 'Alarms', level: 1 }).waitFor()
      await expect(async () => (await page.evaluate(() => document.activeElement?.id)) === 'main', 'the focus moved to the new page')
      assert.equal(await page.getByRole('link', { name: 'Alarms' }).getAttribute('aria-current'), 'page')

      // A gateway posts an alarm with a member API key; the open page shows it without a reload (polling).
      const gateway = await c.mintKey('member', 'gateway')
      const posted = await c.must<{ accepted: number; results: Array<{ alarmId: string }> }>(
        'POST',
        '/api/sites/CHPP-1/alarms/events',
        {
          events: [
            {
              eventId: 'ev-1',
              instanceId: 'CV-101',
              condition: 'belt_slip',
              priority: 'high',
              state: 'active',
              occurredAt: new Date(Date.now() - 60_000).toISOString(),
              message: 'Belt slip detected',
              value: 12.5,
              limit: 10,
            },
          ],
        },
        gateway.plaintext,
      )
      assert.equal(posted.accepted, 1)
      const alarmId = posted.results[0]!.alarmId
      const row = page.locator(`tr[data-alarm-id="${alarmId}"]`)
      await row.waitFor({ timeout: 15_000 })
      assert.equal(await row.getAttribute('data-state'), 'active_unacknowledged')
      await page.locator('.alarm-load figure').waitFor()
      await shot(page, 'alarms')
      await row.getByRole('button', { name: 'Acknowledge CV-101 belt_slip' }).click()
      await page.locator(`tr[data-alarm-id="${alarmId}"][data-state="active_acknowledged"]`).waitFor()
      const stored = await c.must<{ state: string; history: Array<{ action: string; actorKind: string }> }>('GET', `/api/sites/CHPP-1/alarms/${alarmId}`)
      assert.equal(stored.state, 'active_acknowledged')
      assert.deepEqual(stored.history.at(-1), { ...stored.history.at(-1), action: 'acknowledged', actorKind: 'sitePin' })
      // Shelve (owner): a dialog with the reason and the expiry; the alarm becomes shelved until then.
      await row.getByRole('button', { name: 'Shelve CV-101 belt_slip' }).click()
      const shelve = page.getByRole('dialog', { name: 'Shelve CV-101 belt_slip' })
      await shelve.getByLabel('Reason').fill('belt being re-tensioned')
      await shelve.getByRole('button', { name: 'Shelve alarm' }).click()
      await page.locator(`tr[data-alarm-id="${alarmId}"][data-state="shelved"]`).waitFor()
      const shelved = await c.must<{ state: string; shelvedUntil: string }>('GET', `/api/sites/CHPP-1/alarms/${alarmId}`)
      assert.equal(shelved.state, 'shelved')
      const hoursAhead = (Date.parse(shelved.shelvedUntil) - Date.now()) / 3_600_000
      assert.ok(hoursAhead > 7 && hoursAhead <= 8, `shelved for the default 8 hours (${hoursAhead.toFixed(2)})`)
      // Filters: only unacknowledged alarms → the shelved one leaves the list.
      await page.getByLabel('Active, unacknowledged').check()
      await page.getByText('No alarms match these filters.').waitFor()
      assert.match(page.url(), /state=active_unacknowledged/)

      // The API keys page for a site owner; an API error is shown next to the field it names.
      await page.getByRole('link', { name: 'API keys' }).click()
      await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor()
      await page.getByRole('button', { name: 'Mint key' }).click()
      const nameError = page.locator('[data-pointer="/name"] .field-error')
      await nameError.waitFor()
      assert.match((await nameError.textContent()) ?? '', /\S/)
      assert.equal(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid'), 'true')
      assert.equal(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name), 'name', 'the focus goes to the field in error')

      // Site users (site server only): the owner adds a member with a PIN through the form.
      await page.getByRole('link', { name: 'Site users' }).click()
      await page.getByRole('heading', { name: 'Site users', level: 1 }).waitFor()
      const member = { email: 'operator@plant.example', pin: '13572468', name: 'Shift operator', role: 'member' }
      await page.getByLabel('E-mail').fill(member.email)
      await page.getByLabel('Display name').fill(member.name)
      await page.getByLabel('Site role').selectOption('member')
      await page.getByLabel('PIN', { exact: true }).fill('123')
      await page.getByRole('button', { name: 'Add site user' }).click()
      await page.locator('[data-pointer="/pin"] .field-error').filter({ hasText: /\S/ }).waitFor()
      await page.getByLabel('PIN', { exact: true }).fill(member.pin)
      await page.getByRole('button', { name: 'Add site user' }).click()
      await page.locator('tr[data-user-id]').filter({ hasText: member.email }).waitFor()
      await shot(page, 'site-users')
      assert.deepEqual(page.errors, [], 'no script error and no CSP refusal')

      // Repeated wrong PINs (sent from another loopback address, so this browser's address is not throttled) lock the
      // member's e-mail: the sign-in form says so, and the owner's "Unlock sign-in" lets the member in at once.
      for (let i = 0; i < 5; i++) assert.equal(await wrongPinFrom('127.0.0.2', c.origin, member.email), 401)
      const memberPage = await c.browser.page({ width: 820, height: 1180 }) // a tablet, portrait
      await memberPage.goto(`${c.origin}/sites`)
      await memberPage.getByLabel('E-mail').fill(member.email)
      await memberPage.getByLabel('PIN', { exact: true }).fill(member.pin)
      await memberPage.getByRole('button', { name: 'Sign in' }).click()
      await memberPage
        .getByRole('alert')
        .filter({ hasText: /is locked after too many wrong PINs until .+ \(this device's time\)/ })
        .waitFor()
      await page.getByRole('button', { name: `Unlock sign-in of ${member.name}` }).click()
      await page
        .getByRole('status')
        .filter({ hasText: `${member.name} can sign in again.` })
        .waitFor()

      // A site member: no administration in the navigation, and the page itself says so.
      await signInWithPin(memberPage, c.origin, member)
      assert.equal(await memberPage.getByRole('link', { name: 'API keys' }).count(), 0)
      assert.equal(await memberPage.getByRole('link', { name: 'Site users' }).count(), 0)
      assert.equal(await memberPage.getByRole('heading', { name: 'Administration' }).count(), 0)
      assert.equal(await memberPage.getByRole('link', { name: 'Alarms' }).count(), 1)
      await memberPage.goto(`${c.origin}/admin/keys`)
      await memberPage.getByText('This page is for organisation owners and admins.').waitFor()
      await memberPage.goto(`${c.origin}/alarms`)
      await memberPage.locator(`tr[data-alarm-id="${alarmId}"]`).waitFor()
      assert.equal(await memberPage.getByRole('button', { name: /^Shelve/ }).count(), 0, 'members do not shelve')
      await shot(memberPage, 'alarms-member-tablet')
      const small = await memberPage.getByRole('button', { name: 'Sign out' }).boundingBox()
      assert.ok(small && small.height >= 44, `touch-size targets (sign-out is ${small?.height} px high)`)

      // Sign-out ends the sign-in: back to the form, and the refresh token no longer works.
      await memberPage.getByRole('button', { name: 'Sign out' }).click()
      await memberPage.getByRole('heading', { name: 'Sign in to sitegrid' }).waitFor()
      assert.equal(await memberPage.evaluate(() => sessionStorage.length), 0)
      assert.deepEqual(memberPage.errors, [])
    })
  })

  describe('cloud mode (OpenID Connect browser sign-in)', () => {
    it('sign-in through the provider, approval, mint a key (shown once, copy button), revoke it (reason, confirmation) → the key gets 401', async (t) => {
      const c = await cloudConsole(t)
      const page = await c.browser.page()
      await signInWithProvider(page, c, 'ada', '/admin/keys')
      // A first sign-in asks to join: the console says so until an owner approves.
      await page.getByRole('heading', { name: 'Awaiting approval' }).waitFor()
      await c.approve('ada', 'owner')
      await page.getByRole('button', { name: 'Check again' }).click()
      await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor()
      assert.equal(new URL(page.url()).pathname, '/admin/keys', 'back where the sign-in started')
      const cookies = await page.context().cookies(c.origin)
      assert.ok(
        cookies.some((k) => k.name === '__Host-sitegrid-session' && k.httpOnly),
        'the session is an HttpOnly cookie',
      )
      assert.equal(await page.evaluate(() => document.cookie), '', 'the page cannot read it')
      for (const label of ['Members', 'Domains', 'Audit log']) assert.equal(await page.getByRole('link', { name: label }).count(), 1, label)
      assert.equal(await page.getByRole('link', { name: 'Site users' }).count(), 0, 'site users exist on a site server only')

      // Mint: the plaintext is shown once, with a copy button and a warning.
      await page.getByLabel('Name', { exact: true }).fill('edge gateway 3')
      await page.getByLabel('Role').selectOption('member')
      await page.getByRole('button', { name: 'Mint key' }).click()
      const secret = page.getByLabel('The new API key')
      await secret.waitFor()
      const plaintext = await secret.inputValue()
      assert.match(plaintext, /^csk_[0-9A-Za-z]{32}$/)
      assert.equal(await page.getByRole('button', { name: 'Copy key' }).count(), 1)
      await page.getByText('It is shown only this once').waitFor()
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: c.origin })
      await page.getByRole('button', { name: 'Copy key' }).click()
      await page.getByText(/Copied to the clipboard|Selected: press Ctrl\+C/).waitFor()
      await shot(page, 'api-keys-minted')
      assert.equal((await c.call('GET', '/api/me', undefined, plaintext)).status, 200, 'the minted key works')
      await page.getByRole('button', { name: 'I have stored it — hide the key' }).click()
      assert.equal(await page.getByLabel('The new API key').count(), 0)
      assert.equal((await page.content()).includes(plaintext), false, 'the plaintext is gone from the page')
      await page.reload()
      await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor()
      await page.locator('tr[data-key-id]').filter({ hasText: 'edge gateway 3' }).waitFor()
      assert.equal((await page.content()).includes(plaintext), false, 'never shown again')

      // Revoke: a confirmation dialog asking for the reason; cancelling changes nothing.
      const row = page.locator('tr[data-key-id]').filter({ hasText: 'edge gateway 3' })
      await row.getByRole('button', { name: /^Revoke key edge gateway 3/ }).click()
      const dialog = page.getByRole('dialog', { name: 'Revoke key "edge gateway 3"?' })
      await dialog.waitFor()
      assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'TEXTAREA', 'the focus moved into the dialog')
      await dialog.getByRole('button', { name: 'Cancel' }).click()
      assert.equal(await dialog.count(), 0)
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Revoke', 'the focus went back to the button')
      assert.equal((await c.call('GET', '/api/me', undefined, plaintext)).status, 200, 'cancel revoked nothing')
      await row.getByRole('button', { name: /^Revoke key edge gateway 3/ }).click()
      await dialog.getByLabel('Reason').fill('gateway replaced')
      await shot(page, 'api-keys-revoke-dialog')
      await dialog.getByRole('button', { name: 'Revoke key' }).click()
      await page.locator('tr[data-key-id][data-status="revoked"]').filter({ hasText: 'edge gateway 3' }).waitFor()
      assert.equal((await c.call('GET', '/api/me', undefined, plaintext)).status, 401, 'the revoked key is refused')
      const audit = await c.must<{ items: Array<{ action: string; detail: Record<string, unknown> | null; actorKind: string }> }>(
        'GET',
        `/api/admin/orgs/${c.slug}/audit?action=api_key.revoked`,
      )
      assert.deepEqual(
        audit.items.map((e) => [e.actorKind, e.detail?.reason]),
        [['user', 'gateway replaced']],
      )
      await shot(page, 'api-keys')

      // The other administration pages.
      await page.getByRole('link', { name: 'Members' }).click()
      await page.locator(`tr[data-account-id="${c.oidOf('ada')}"][data-status="active"]`).waitFor()
      await shot(page, 'members')
      await page.getByRole('link', { name: 'Domains' }).click()
      await page.getByLabel('Domain', { exact: true }).fill('Plant.Example.com')
      await page.getByRole('button', { name: 'Bind domain' }).click()
      await page.locator('[data-pointer="/domain"] .field-error').filter({ hasText: /\S/ }).waitFor()
      await page.getByLabel('Domain', { exact: true }).fill('plant.example.com')
      await page.getByRole('button', { name: 'Bind domain' }).click()
      await page.locator('tr[data-domain="plant.example.com"]').waitFor()
      await shot(page, 'domains')
      await page.getByRole('link', { name: 'Audit log' }).click()
      await page.getByText('api_key.revoked').waitFor()
      await shot(page, 'audit')

      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByRole('heading', { name: 'Sign in to sitegrid' }).waitFor()
      const after = await page.evaluate(async () => (await fetch('/auth/token', { method: 'POST' })).status)
      assert.equal(after, 401, 'the session ended')
      assert.deepEqual(page.errors, [], 'no script error and no CSP refusal')
    })
  })
})
