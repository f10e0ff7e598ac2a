import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { seriousViolations, shot, signInWithPin, siteConsole } from './support.ts'

// Issue 30 in a real headless Chromium against a real `sitegrid serve` (site mode): a site-PIN owner sees the site's
// edge gateways and their controllers as online, stale or faulted with the last heartbeat in the site's zone, and the
// API keys page shows a gateway key's restriction (its site and client networks).

const ZONE = 'Asia/Kolkata'

describe('edge gateways and key restrictions in headless Chromium', () => {
  it("a site-PIN owner sees each gateway and controller online, stale or faulted with the heartbeat in the site's zone, and a key's site and networks", async (t) => {
    const c = await siteConsole(t)
    await c.must('POST', '/api/sites', { code: 'S1', name: 'Crusher plant', timeZone: ZONE })
    const ids: string[] = []
    for (const [n, edgeId] of [
      [1, 'GW-1'],
      [2, 'GW-2'],
      [3, 'GW-3'],
    ] as const) {
      const ctl = await c.must<{ id: string }>('POST', '/api/sites/S1/controllers', {
        name: `PLC ${n}`,
        platform: 1,
        assetNumber: `PLC-${n}`,
        connection: { protocol: 'EtherNet/IP', ipAddress: `10.0.0.${n}` },
      })
      await c.must('POST', `/api/sites/S1/controllers/${ctl.id}/assign`, { edgeId })
      ids.push(ctl.id)
    }
    // The gateways' key: this site only, from loopback only (the test's client address).
    const gateway = await c.must<{ plaintext: string; keyId: string }>('POST', '/api/admin/api-keys', {
      role: 'member',
      name: 'gateway key',
      expiresAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      siteId: 'S1',
      networks: ['127.0.0.0/8', '::1'],
    })
    const beat = (edgeId: string, controllerId: string, communication: 'ok' | 'failed') =>
      c.must(
        'PUT',
        `/api/sites/S1/edges/${edgeId}/status`,
        {
          gatewayVersion: '2.4.1',
          controllers: [
            {
              controllerId,
              communication,
              lastGoodPollAt: null,
              errorCount: communication === 'ok' ? 0 : 12,
              lastError: communication === 'ok' ? null : 'connection refused',
            },
          ],
        },
        gateway.plaintext,
      )
    await beat('GW-1', ids[0]!, 'ok')
    await beat('GW-2', ids[1]!, 'failed')

    const page = await c.browser.page()
    await signInWithPin(page, c.origin, c.owner, '/sites/S1')
    const gateways = page.getByRole('table', { name: 'Edge gateways' })
    await gateways.waitFor()
    const states = await gateways.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-edge-id'), r.getAttribute('data-state')]))
    assert.deepEqual(states, [
      ['GW-1', 'online'],
      ['GW-2', 'faulted'],
      ['GW-3', 'stale'],
    ])
    const controllers = page.getByRole('table', { name: 'Controllers by gateway' })
    const controllerStates = await controllers
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-controller-id'), r.getAttribute('data-state')]))
    assert.deepEqual(controllerStates, [
      [ids[0], 'online'],
      [ids[1], 'faulted'],
      [ids[2], 'stale'],
    ])
    assert.equal(await gateways.locator('tbody tr').nth(2).getByRole('cell').nth(2).textContent(), 'never')
    // The last heartbeat is shown in the site's zone, as Intl formats it there.
    const heartbeat = gateways.locator('tbody tr').first().locator('time')
    assert.equal(await heartbeat.getAttribute('data-zone'), ZONE)
    const expected = await heartbeat.evaluate(
      (el, zone) =>
        new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone: zone }).format(new Date(el.getAttribute('datetime')!)),
      ZONE,
    )
    assert.equal(await heartbeat.textContent(), expected)
    assert.match((await controllers.locator('tbody tr').nth(1).textContent()) ?? '', /connection refused/)
    await shot(page, 'site-gateways')
    assert.deepEqual(await seriousViolations(page), [])

    await page.goto(`${c.origin}/admin/keys`)
    const keys = page.getByRole('table', { name: 'API keys, newest first' })
    await keys.waitFor()
    const restricted = keys.locator(`tr[data-key-id="${gateway.keyId}"] .key-restriction`)
    assert.equal(await restricted.textContent(), 'Site S1, from 127.0.0.0/8, ::1/128')
    const seed = keys.locator('tr:not([data-key-id="' + gateway.keyId + '"]) .key-restriction').first()
    assert.equal(await seed.textContent(), 'Every site, any network')
    await shot(page, 'api-keys-restriction')
    assert.deepEqual(await seriousViolations(page), [])
    assert.deepEqual(page.errors, [])
  })
})
