// Stored XSS, as a hostile tenant user would try it: markup written through the API into every text a page of the
// console shows (site name and location, controller, instance and node names, an alarm's message) must be shown as that
// text, never parsed: no element of the payload in the DOM, its handler never run, no page error or CSP refusal.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { expect } from './expect.ts'
import { signInWithPin, siteConsole } from './support.ts'

const payload = (n: number) => `<img src=x onerror="window.__xss=${n}"><svg onload="window.__xss=${n}"></svg><b>x${n}</b>`

/** The payload is on the page as text, and nothing of it became an element or ran. */
async function shownAsText(page: Page, n: number, where: string): Promise<void> {
  await expect(() => page.getByText(payload(n), { exact: false }).first().isVisible(), `${where}: payload ${n} shown as text`)
  assert.equal(await page.locator('img[src="x"], svg[onload], b').count(), 0, `${where}: no element parsed from a payload`)
  assert.equal(await page.evaluate(() => (window as { __xss?: unknown }).__xss), undefined, `${where}: no payload ran`)
}

describe('web console in headless Chromium: stored markup is text', () => {
  it('site, controller, instance and network node names and an alarm message holding markup are shown as text on every page, never run', async (t) => {
    const c = await siteConsole(t)
    await c.must('POST', '/api/sites', { code: 'XSS-1', name: payload(1), location: payload(2) })
    const ctl = await c.must<{ id: string }>('POST', '/api/sites/XSS-1/controllers', {
      name: payload(3),
      platform: 0,
      assetNumber: 'PLC-1',
      connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.1' },
    })
    await c.must('POST', '/api/sites/XSS-1/instances', { id: 'CV-1', name: payload(4), typeId: 'conveyor', assetNumber: 'A-CV-1', controllerId: ctl.id })
    await c.must('POST', '/api/sites/XSS-1/alarms/events', {
      events: [
        {
          eventId: 'ev-xss',
          instanceId: 'CV-1',
          condition: 'belt_slip',
          priority: 'high',
          state: 'active',
          occurredAt: new Date(Date.now() - 60_000).toISOString(),
          message: payload(5),
        },
      ],
    })

    await c.must('POST', '/api/sites/XSS-1/electrical/nodes', { id: 'N1', name: payload(6), nodeType: 3 })

    const page = await c.browser.page()
    await signInWithPin(page, c.origin, c.owner)
    await shownAsText(page, 1, '/sites')
    await shownAsText(page, 2, '/sites')
    await page.goto(`${c.origin}/sites/XSS-1`)
    for (const n of [1, 3, 4]) await shownAsText(page, n, '/sites/XSS-1')
    // The one-line diagram (SVG): the node's name is its title's text, whole.
    await page.locator('.ol-node title').first().waitFor({ state: 'attached' })
    assert.ok(String(await page.locator('.ol-node title').first().textContent()).startsWith(payload(6)), 'the node is titled with its name as text')
    await shownAsText(page, 1, '/sites/XSS-1 with its diagram')
    await page.goto(`${c.origin}/alarms?site=XSS-1`)
    await shownAsText(page, 5, '/alarms')
    assert.deepEqual(page.errors, [])
  })
})
