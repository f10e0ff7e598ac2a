import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { httpRequest } from '../cli/process.ts'
import { CONSOLE_PATHS } from '../../web/src/paths.ts'
import { cloudConsole, seriousViolations, shot, signInWithPin, signInWithProvider, siteConsole, type ConsoleServer } from './support.ts'

// Accessibility of every console page (issue 28): axe-core in the same headless Chromium on each path of the route
// table, in site mode (a site-PIN owner, at 800 px wide: the narrowest width the console supports) and in cloud mode
// (an OIDC admin, at 1280 px and again at 800 px), with a screenshot of each. Serious and critical violations fail; at 800 px nothing of
// the shell or the page may reach past the window's right edge.

/** What reaches past the window's right edge (elements wider than the viewport, or starting beyond it). */
async function offScreen(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth
    const out: string[] = []
    if (document.documentElement.scrollWidth > width) out.push(`the page scrolls sideways (${document.documentElement.scrollWidth} > ${width} px)`)
    for (const el of document.querySelectorAll<HTMLElement>('header *, nav *, main button, main input, main select, main h1')) {
      const r = el.getBoundingClientRect()
      // A control inside a table that scrolls sideways counts too: a row's action must not need a sideways scroll.
      if (r.width === 0) continue
      if (r.right > width + 0.5)
        out.push(
          `${el.tagName.toLowerCase()}${el.className ? `.${el.className}` : ''} "${(el.textContent ?? '').trim().slice(0, 40)}" ends at ${Math.round(r.right)} px`,
        )
    }
    // Above the page, the navigation is as tall as its links (plus its padding), whatever the page's length.
    const nav = document.querySelector('nav[aria-label="Main"]')!
    const items = [...nav.children].map((c) => c.getBoundingClientRect())
    const slack = nav.getBoundingClientRect().height - (Math.max(...items.map((r) => r.bottom)) - Math.min(...items.map((r) => r.top)))
    if (slack > 40) out.push(`the navigation has ${Math.round(slack)} px of empty height`)
    return out
  })
}

/** The site, controller, instance and alarm every page has something of. */
async function seed(c: ConsoleServer): Promise<void> {
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
    tagMappings: { running: 'Program:Main.CV101.Run' },
  })
  // A small network, so the site page draws its one-line diagram (with a long label) and the node panel.
  await c.must('PUT', '/api/sites/CHPP-1/electrical/network', {
    nodes: [
      { id: 'GRID', name: 'Grid infeed 33 kV', nodeType: 0, ratedVoltageV: 33000 },
      { id: 'TX1', name: 'Transformer 33/0.415 kV feeding the coal handling plant main switchboard', nodeType: 2, ratedPowerKw: 1500 },
      { id: 'CB-1', name: 'Conveyor breaker', nodeType: 5, ratedCurrentA: 400, protectionCurve: 'IEC SI', protectionPickupA: 300, protectionTms: 0.1 },
      { id: 'M-1', name: 'Conveyor motor', nodeType: 8, ratedPowerKw: 160 },
    ],
    edges: [
      { sourceId: 'GRID', targetId: 'TX1', edgeType: 0 },
      { sourceId: 'TX1', targetId: 'CB-1', edgeType: 3 },
      { sourceId: 'CB-1', targetId: 'M-1', edgeType: 0 },
    ],
  })
  // An audit event with a long unbroken word (a key named like a device path) for the audit log's table.
  await c.mintKey('member', `edge_gateway_${'0123456789'.repeat(8)}`)
  await c.must('POST', '/api/sites/CHPP-1/alarms/events', {
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
  })
}

/**
 * Opens every console path in turn (through the address bar, as a bookmark would), waits for its page to settle,
 * saves a screenshot and collects axe's serious and critical violations and, when asked, what is off screen.
 */
async function walk(page: Page, origin: string, mode: string, options: { checkWidth: boolean }): Promise<string[]> {
  const failures: string[] = []
  const paths = CONSOLE_PATHS.filter((p) => p !== '/' && p !== '/sign-in').map((p) => p.replace(':code', 'CHPP-1'))
  for (const path of paths) {
    await page.goto(`${origin}${path}`)
    await page.locator('main h1').first().waitFor()
    await page.waitForLoadState('networkidle')
    const name = `a11y-${mode}${path.replaceAll('/', '-')}`
    await shot(page, name)
    for (const v of await seriousViolations(page))
      failures.push(`${mode} ${path}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
    if (options.checkWidth) for (const o of await offScreen(page)) failures.push(`${mode} ${path} at 800 px: ${o}`)
  }
  return failures
}

describe('console accessibility (axe-core) and screenshots of every page', { concurrency: 2 }, () => {
  it('site mode, a site-PIN owner at 800 px: every page has no serious or critical violation and nothing off screen; the audit log says why not', async (t) => {
    const c = await siteConsole(t)
    await seed(c)
    const page = await c.browser.page({ width: 800, height: 900 })
    await page.goto(`${c.origin}/sites`)
    await page.getByRole('heading', { name: 'Sign in to sitegrid' }).waitFor()
    await shot(page, 'a11y-site-sign-in')
    const failures = (await seriousViolations(page)).map((v) => `site /sign-in: ${v.impact} ${v.id} (${v.help})`)
    await signInWithPin(page, c.origin, c.owner)

    // The navigation at 800 px: every link on screen and reachable.
    for (const label of ['Sites', 'Alarms', 'Historian', 'Cloud link', 'API keys', 'Site users']) {
      const box = await page.getByRole('link', { name: label, exact: true }).boundingBox()
      assert.ok(box && box.x >= 0 && box.x + box.width <= 800, `${label} is on screen at 800 px`)
    }
    failures.push(...(await walk(page, c.origin, 'site', { checkWidth: true })))

    // The audit log is organisation administration: the API refuses a site-PIN session (403), and the page says why
    // in the owner's terms rather than "for owners and admins".
    await page.goto(`${c.origin}/admin/audit`)
    const login = await httpRequest(`${c.origin}/auth/site/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: c.owner.email, pin: c.owner.pin }),
    })
    const token = (login.json() as { accessToken: string }).accessToken
    const { status } = await httpRequest(`${c.origin}/api/admin/orgs/plant/audit`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(status, 403, 'GET …/audit refuses a site-PIN owner')
    const notice = (await page.locator('main .notice').textContent()) ?? ''
    assert.match(notice, /^You are signed in with a site PIN: you administer this site .*The organisation's audit log is for its owners and admins/, notice)
    assert.doesNotMatch(notice, /This page is for organisation owners and admins/)
    assert.deepEqual(failures, [])
    assert.deepEqual(page.errors, [], 'no script error and no CSP refusal')
  })

  it('cloud mode, an OIDC admin at 1280 px and 800 px: every page has no serious or critical violation, and nothing off screen at 800 px', async (t) => {
    const c = await cloudConsole(t)
    await seed(c)
    const page = await c.browser.page()
    await page.goto(`${c.origin}/sites`)
    await page.getByRole('heading', { name: 'Sign in to sitegrid' }).waitFor()
    await shot(page, 'a11y-cloud-sign-in')
    const failures = (await seriousViolations(page)).map((v) => `cloud /sign-in: ${v.impact} ${v.id} (${v.help})`)
    await signInWithProvider(page, c, 'ada')
    await page.getByRole('heading', { name: 'Awaiting approval' }).waitFor()
    failures.push(...(await seriousViolations(page)).map((v) => `cloud awaiting approval: ${v.impact} ${v.id} (${v.help})`))
    await c.approve('ada', 'admin')
    await page.reload()
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    failures.push(...(await walk(page, c.origin, 'cloud', { checkWidth: false })))
    // The cloud shell has the longest navigation (organisation administration, the fleet): again at 800 px.
    await page.setViewportSize({ width: 800, height: 900 })
    failures.push(...(await walk(page, c.origin, 'cloud-800', { checkWidth: true })))
    assert.deepEqual(failures, [])
    assert.deepEqual(page.errors, [], 'no script error and no CSP refusal')
  })
})
