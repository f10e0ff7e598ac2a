import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { setUpAi } from './route-test-setup.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: AI limits, usage and grounding (usage read and grounding)`, () => {
    it("an admin reads usage per UTC day and tier with each tier's limits and load; members get 403; nothing of another org shows", async (t) => {
      const { h, box, cloud, ask, org, ownerKey, key } = await setUpAi(t, dialect)
      h.clock.set(Date.parse('2026-05-01T10:00:00.000Z'))
      box.enqueue({ kind: 'ok', text: 'a', usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })
      await ask({ prompt: 'x' })
      cloud.enqueue({ kind: 'error', status: 500 })
      await ask({ prompt: 'x', tier: 'deep' })
      h.clock.set(Date.parse('2026-05-02T09:00:00.000Z'))
      box.enqueue({ kind: 'ok', text: 'a', usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } })
      await ask({ prompt: 'x' })
      const other = await h.orgWithKey('owner')
      await ask({ prompt: 'x' }, { org: other.org, apiKey: other.key })

      const res = await h.inject({ org, apiKey: ownerKey }, { url: '/api/ai/usage?from=2026-04-30&to=2026-05-02' })
      assert.equal(res.statusCode, 200)
      const body = res.json()
      assert.equal(body.from, '2026-04-30')
      assert.deepEqual(body.days, [
        { day: '2026-05-01', tier: 'deep', requests: 1, failedRequests: 1, promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        { day: '2026-05-01', tier: 'fast', requests: 1, failedRequests: 0, promptTokens: 10, completionTokens: 5, totalTokens: 15 },
        { day: '2026-05-02', tier: 'fast', requests: 1, failedRequests: 0, promptTokens: 1, completionTokens: 2, totalTokens: 3 },
      ])
      assert.deepEqual(
        body.tiers.find((x: { tier: string }) => x.tier === 'fast'),
        { tier: 'fast', requestsPerMinute: 100, requestsLastMinute: 1, tokensPerDay: 1_000_000, tokensToday: 3 },
      )
      const defaults = (await h.inject({ org, apiKey: ownerKey }, { url: '/api/ai/usage' })).json()
      assert.deepEqual([defaults.from, defaults.to], ['2026-04-03', '2026-05-02'], 'default: the last 30 days')
      assert.equal((await h.inject({ org, apiKey: key }, { url: '/api/ai/usage' })).statusCode, 403)
      for (const query of ['from=2026-05-03&to=2026-05-02', 'from=2026-02-30', 'from=2024-01-01&to=2026-01-01', 'from=yesterday', 'when=today']) {
        const bad = await h.inject({ org, apiKey: ownerKey }, { url: `/api/ai/usage?${query}` })
        assert.equal(bad.statusCode, 400, query)
      }
    })

    it('siteId grounds the answer in the site, its controllers and active alarms; the response lists what was included', async (t) => {
      const { h, box, cloud, ask, org, ownerKey, usageRows } = await setUpAi(t, dialect)
      const as = (method: 'POST', url: string, payload: unknown) => h.inject({ org, apiKey: ownerKey }, { method, url, payload: payload as object })
      assert.equal(
        (await as('POST', '/api/sites', { code: 'NORTH-1', name: 'North substation', location: 'Gate 10.1.2.3', timeZone: 'Europe/Paris' })).statusCode,
        201,
      )
      const ctl = await as('POST', '/api/sites/NORTH-1/controllers', {
        name: 'Crusher PLC',
        platform: 1,
        assetNumber: 'A-77',
        connection: { protocol: 'EtherNet/IP', ipAddress: '10.20.1.15', cipPath: '1,0' },
      })
      assert.equal(ctl.statusCode, 201, ctl.body)
      const controllerId = (ctl.json() as { id?: string; controllerId?: string }).controllerId ?? (ctl.json() as { id: string }).id
      assert.equal(
        (await as('POST', '/api/sites/NORTH-1/instances', { id: 'CV-1', name: 'Conveyor 1', typeId: 'conveyor', assetNumber: 'A-CV1', controllerId }))
          .statusCode,
        201,
      )
      const alarm = {
        eventId: 'e1',
        instanceId: 'CV-1',
        condition: 'MOTOR_OVERTEMP',
        priority: 'critical',
        state: 'active',
        occurredAt: new Date(h.clock.now() - 60_000).toISOString(),
        message: 'Winding at 140 C',
      }
      assert.equal(
        (
          await as('POST', '/api/sites/NORTH-1/alarms/events', {
            events: [alarm, { ...alarm, eventId: 'e2', condition: 'BELT_SLIP', priority: 'low', state: 'normal' }],
          })
        ).statusCode,
        200,
      )

      const res = await ask({ prompt: 'Summarise the site', systemPrompt: 'Be brief.', siteId: 'NORTH-1' })
      assert.equal(res.statusCode, 200)
      const { grounding } = res.json()
      assert.equal(grounding.siteId, 'NORTH-1')
      assert.deepEqual(grounding.included.slice(0, 3), ['site', 'controllers', 'activeAlarms'])
      const system = String((box.requests[0]?.body?.messages as Array<{ content: string }>)[0]?.content)
      assert.match(system, /^Be brief\.\n\nContext from sitegrid/)
      assert.match(system, /Site NORTH-1 "North substation": status \w+, time zone Europe\/Paris\./)
      assert.match(system, /Location: Gate 10\.1\.2\.3\./)
      assert.match(system, /Controllers \(1\):\n- Crusher PLC \[A-77\]: .*EtherNet\/IP at 10\.20\.1\.15, CIP path 1,0/)
      assert.match(system, /Active alarms, newest change first \(1\):\n- \[critical\] MOTOR_OVERTEMP on CV-1 .*: Winding at 140 C/)
      assert.ok(!system.includes('BELT_SLIP'), 'an alarm back to normal is not active')
      for (const name of grounding.included.filter((i: string) => i.endsWith('Count'))) assert.match(system, new RegExp(`${name.slice(0, -5)} \\d+`))
      assert.equal((await usageRows())[0]?.site_code, 'NORTH-1')
      // Off site, the grounding is redacted like the rest of the prompt.
      const deep = await ask({ prompt: 'Summarise the site', siteId: 'NORTH-1', tier: 'deep' })
      assert.ok(deep.json().redactions.ip >= 2)
      const sent = String((cloud.requests[0]?.body?.messages as Array<{ content: string }>)[0]?.content)
      assert.ok(!sent.includes('10.20.1.15') && !sent.includes('10.1.2.3'), 'no plant address leaves the site')
    })

    it("an unknown site, or another organisation's, is the uniform 404; nothing reaches the provider or the records", async (t) => {
      const { h, box, ask, usageRows } = await setUpAi(t, dialect)
      const other = await h.orgWithKey('owner')
      assert.equal(
        (await h.inject({ org: other.org, apiKey: other.key }, { method: 'POST', url: '/api/sites', payload: { code: 'THEIRS', name: 'Theirs' } })).statusCode,
        201,
      )
      for (const siteId of ['NOPE', 'THEIRS']) {
        const res = await ask({ prompt: 'x', siteId })
        assert.equal(res.statusCode, 404)
        assert.equal(res.json().code, 'NotFound')
      }
      assert.equal(box.requests.length, 0)
      assert.deepEqual(await usageRows(), [])
    })
  })
}
