import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { controllerBody, createController, equipmentSetup, rowCount, snapshot } from './test-support.ts'

const URL = '/api/sites/S1/controllers'

for (const dialect of testDialects()) {
  describe(`${dialect}: controllers`, () => {
    it("create answers 201 with a ctl_ id, the protocol's default port and the documented connection defaults", async (t) => {
      const { as } = await equipmentSetup(t, dialect)
      const res = await as('POST', URL, controllerBody({ firmwareVersion: '33.011' }))
      assert.equal(res.statusCode, 201)
      const c = res.json()
      assert.match(c.id, /^ctl_[0-9A-Z]{26}$/)
      assert.equal(c.siteId, 'S1')
      assert.equal(c.platformName, 'RockwellLogix')
      assert.deepEqual(c.connection, {
        protocol: 'EtherNet/IP',
        ipAddress: '10.20.1.15',
        port: 44818,
        cipPath: null,
        pollIntervalMs: 1000,
        timeoutMs: 3000,
        retryDelayMs: 5000,
        maxRetries: 3,
      })
      assert.equal(c.edgeId, null)
      assert.equal(c.cipRoute, null)
      assert.equal(c.pollBudget.mappedTags, 0)
      assert.deepEqual((await as('GET', `${URL}/${c.id}`)).json(), c)
      const modbus = await createController(as, 'S1', { platform: 4 }, { protocol: 'modbus-tcp' })
      assert.equal((modbus.connection as { port: number }).port, 502)
      const odd = await createController(as, 'S1', { platform: 0 }, { protocol: 'bacnet' })
      assert.equal((odd.connection as { port: number | null }).port, null, 'no well-known port: null')
    })

    it('cipPath of a CIP protocol is checked: the read explains the route; a malformed route is a 400 naming the hop', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as, 'S1', {}, { cipPath: '2,10.0.0.5,1,0' })
      assert.deepEqual((c.cipRoute as { hops: unknown[] }).hops, [
        { port: 2, link: '10.0.0.5', meaning: 'out port 2 (Ethernet) to 10.0.0.5' },
        { port: 1, link: '0', meaning: 'backplane, slot 0' },
      ])
      assert.match((await as('GET', `${URL}/${c.id}`)).json().cipRoute.explanation, /Ethernet\) to 10\.0\.0\.5, then backplane, slot 0/)
      const before = await snapshot(h, org)
      for (const [path, hop] of [
        ['1,17', 'hop 1'],
        ['1,0,2', 'hop 2'],
        ['1,0,2,10.0.0.256', 'hop 2'],
        ['backplane', 'hop 1'],
        ['0,1', 'hop 1'],
      ]) {
        const res = await as('POST', URL, controllerBody({}, { cipPath: path }))
        assert.equal(res.statusCode, 400, path)
        assert.equal(res.json().code, 'ValidationFailed')
        assert.equal(res.json().errors[0].pointer, '/connection/cipPath')
        assert.ok(res.json().errors[0].message.includes(hop), `${path}: ${res.json().errors[0].message}`)
        assert.equal((await as('PUT', `${URL}/${c.id}`, { connection: { cipPath: path } })).statusCode, 400)
      }
      assert.equal(await snapshot(h, org), before)
      // Not CIP: the path is kept as given and not explained; switching to a CIP protocol checks it.
      const modbus = await createController(as, 'S1', { platform: 4 }, { protocol: 'modbus', cipPath: 'unit 1' })
      assert.equal(modbus.cipRoute, null)
      const sw = await as('PUT', `${URL}/${modbus.id}`, { connection: { protocol: 'cip' } })
      assert.equal(sw.statusCode, 400)
      assert.equal(sw.json().errors[0].pointer, '/connection/cipPath')
      assert.equal(
        (await as('PUT', `${URL}/${modbus.id}`, { connection: { protocol: 'cip', cipPath: '1,3' } })).json().cipRoute.hops[0].meaning,
        'backplane, slot 3',
      )
    })

    it('assetNumber is unique per site: a duplicate is 409 Conflict, another site may reuse it', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      await as('POST', '/api/sites', { code: 'S2', name: 'Other' })
      await createController(as, 'S1', { assetNumber: 'PLC-1' })
      const dup = await as('POST', URL, controllerBody({ assetNumber: 'PLC-1' }))
      assert.equal(dup.statusCode, 409)
      assert.equal(dup.json().code, 'Conflict')
      assert.equal(dup.json().errors[0].pointer, '/assetNumber')
      assert.equal((await as('POST', '/api/sites/S2/controllers', controllerBody({ assetNumber: 'PLC-1' }))).statusCode, 201)
      assert.equal(await rowCount(h, 'controllers', org.id), 2)
    })

    it('a create refused by the database (duplicate asset number, no such site) writes no audit row and no outbox row', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      await createController(as, 'S1', { assetNumber: 'PLC-1' })
      const rowsOf = async (table: 'audit_events' | 'link_outbox') =>
        Number(
          (
            await h.handle.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as('n'))
              .where('org_id', '=', org.id)
              .executeTakeFirstOrThrow()
          ).n,
        )
      const before = [await rowsOf('audit_events'), await rowsOf('link_outbox')]
      assert.equal((await as('POST', URL, controllerBody({ assetNumber: 'PLC-1' }))).statusCode, 409)
      assert.equal((await as('POST', '/api/sites/NOPE/controllers', controllerBody({ assetNumber: 'PLC-2' }))).statusCode, 404)
      assert.deepEqual([await rowsOf('audit_events'), await rowsOf('link_outbox')], before)
      assert.equal(await rowCount(h, 'controllers', org.id), 1)
    })

    it('assign: edgeId required 0 to 50, edgePlcId nullable 0 to 100; an empty edgeId and unassign clear the assignment', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      const assign = (body: unknown) => as('POST', `${URL}/${c.id}/assign`, body)
      const res = await assign({ edgeId: 'E'.repeat(50), edgePlcId: 'p'.repeat(100) })
      assert.equal(res.statusCode, 200)
      assert.equal(res.json().edgeId, 'E'.repeat(50))
      assert.equal(res.json().edgePlcId, 'p'.repeat(100))
      const before = await snapshot(h, org)
      for (const body of [
        { edgeId: 'E'.repeat(51) },
        { edgeId: 'E', edgePlcId: 'p'.repeat(101) },
        {},
        { edgePlcId: 'x' },
        { edgeId: null },
        { edgeId: 5 },
        { edgeId: 'E', extra: 1 },
      ]) {
        assert.equal((await assign(body)).statusCode, 400, JSON.stringify(body))
      }
      assert.equal(await snapshot(h, org), before)
      const second = (await assign({ edgeId: 'GW-2', edgePlcId: null })).json()
      assert.deepEqual([second.edgeId, second.edgePlcId], ['GW-2', null])
      const emptied = (await assign({ edgeId: '' })).json()
      assert.deepEqual([emptied.edgeId, emptied.edgePlcId], [null, null])
      await assign({ edgeId: 'GW-3', edgePlcId: '7' })
      const un = await as('POST', `${URL}/${c.id}/unassign`)
      assert.equal(un.statusCode, 200)
      assert.deepEqual([un.json().edgeId, un.json().edgePlcId], [null, null])
      assert.equal((await as('POST', `${URL}/${c.id}/unassign`)).statusCode, 200, 'idempotent')
      assert.equal((await as('POST', `${URL}/ctl_nope/assign`, { edgeId: 'E' })).statusCode, 404)
    })

    it('list is paged by id with a stable cursor and filters by edge', async (t) => {
      const { as } = await equipmentSetup(t, dialect)
      const ids: string[] = []
      for (let i = 0; i < 5; i++) ids.push((await createController(as)).id)
      await as('POST', `${URL}/${ids[1]}/assign`, { edgeId: 'GW-1' })
      await as('POST', `${URL}/${ids[3]}/assign`, { edgeId: 'GW-1' })
      await as('POST', `${URL}/${ids[4]}/assign`, { edgeId: 'GW-2' })
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const page: { items: Array<{ id: string }>; nextCursor: string | null } = (await as('GET', `${URL}?limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json()
        assert.ok(page.items.length <= 2)
        seen.push(...page.items.map((c) => c.id))
        cursor = page.nextCursor
      } while (cursor)
      assert.deepEqual(seen, [...ids].sort())
      const gw1 = (await as('GET', `${URL}?edgeId=GW-1`)).json()
      assert.deepEqual(
        gw1.items.map((c: { id: string }) => c.id),
        [ids[1], ids[3]].sort(),
      )
      assert.equal(gw1.nextCursor, null)
      assert.equal((await as('GET', `${URL}?cursor=nonsense`)).statusCode, 400)
      assert.equal((await as('GET', `${URL}?limit=501`)).statusCode, 400)
      assert.equal((await as('GET', `${URL}?limit=0`)).statusCode, 400)
      assert.equal((await as('GET', `${URL}?colour=red`)).statusCode, 400)
    })

    it('DELETE is refused with 409 while an instance references the controller, then deletes (204, then 404)', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      await as('POST', '/api/sites/S1/instances', { id: 'CV-1', name: 'Conveyor', typeId: 'conveyor', assetNumber: 'X', controllerId: c.id })
      const before = await snapshot(h, org)
      const refused = await as('DELETE', `${URL}/${c.id}`)
      assert.equal(refused.statusCode, 409)
      assert.equal(refused.json().code, 'Conflict')
      assert.equal(refused.json().instances, 1)
      assert.equal(await snapshot(h, org), before)
      assert.equal((await as('DELETE', '/api/sites/S1/instances/CV-1')).statusCode, 204)
      assert.equal((await as('DELETE', `${URL}/${c.id}`)).statusCode, 204)
      assert.equal((await as('GET', `${URL}/${c.id}`)).statusCode, 404)
      assert.equal((await as('DELETE', `${URL}/${c.id}`)).statusCode, 404)
    })

    it('poll budget: mapped tags against the poll interval warn on save and read, never refuse', async (t) => {
      const { as } = await equipmentSetup(t, dialect)
      const c = await createController(as, 'S1', {}, { pollIntervalMs: 100 })
      const tags = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`t${i}`, `Program:Main.T[${i}]`]))
      assert.equal(
        (await as('POST', '/api/sites/S1/instances', { id: 'BIG', name: 'n', typeId: 't', assetNumber: 'a', controllerId: c.id, tagMappings: tags }))
          .statusCode,
        201,
      )
      const read = (await as('GET', `${URL}/${c.id}`)).json()
      assert.equal(read.pollBudget.mappedTags, 400)
      assert.equal(read.pollBudget.instances, 1)
      assert.equal(read.pollBudget.requestsPerPoll, 20)
      assert.equal(read.pollBudget.estimatedPollMs, 200)
      assert.deepEqual(
        read.pollBudget.warnings.map((w: { code: string }) => w.code),
        ['PollOverrun'],
      )
      const near = await as('PUT', `${URL}/${c.id}`, { connection: { pollIntervalMs: 240 } })
      assert.equal(near.statusCode, 200, 'a warning is not a refusal')
      assert.deepEqual(
        near.json().pollBudget.warnings.map((w: { code: string }) => w.code),
        ['PollNearCapacity'],
      )
      const fine = (await as('PUT', `${URL}/${c.id}`, { connection: { pollIntervalMs: 1000 } })).json()
      assert.deepEqual(fine.pollBudget.warnings, [])
      const slow = (await as('PUT', `${URL}/${c.id}`, { connection: { timeoutMs: 30000, maxRetries: 10 } })).json()
      assert.deepEqual(
        slow.pollBudget.warnings.map((w: { code: string }) => w.code),
        ['SlowFailureDetection'],
      )
      assert.equal(slow.pollBudget.failureDetectionMs, 30000 * 11 + 5000 * 10)
      const listed = (await as('GET', URL)).json().items.find((x: { id: string }) => x.id === c.id)
      assert.equal(listed.pollBudget.mappedTags, 400, 'the list carries the budget too')
    })

    it("another organisation's or another site's controller is the uniform 404 and is not changed", async (t) => {
      const { h, as } = await equipmentSetup(t, dialect)
      await as('POST', '/api/sites', { code: 'S2', name: 'Other' })
      const mine = await createController(as)
      const other = await h.orgWithKey('owner')
      const them = (method: string, url: string, payload?: object) => h.inject({ org: other.org, apiKey: other.key }, { method: method as 'GET', url, payload })
      await them('POST', '/api/sites', { code: 'S1', name: 'Same code, other org' })
      const missing = (await as('GET', `${URL}/ctl_00000000000000000000000000`)).json()
      const attempts: Array<[string, string, object?]> = [
        ['GET', `${URL}/${mine.id}`],
        ['PUT', `${URL}/${mine.id}`, { name: 'x' }],
        ['DELETE', `${URL}/${mine.id}`],
        ['POST', `${URL}/${mine.id}/assign`, { edgeId: 'E' }],
        ['POST', `${URL}/${mine.id}/unassign`],
      ]
      for (const [method, url, payload] of attempts) {
        const res = await them(method, url, payload)
        assert.equal(res.statusCode, 404, `other org ${method} ${url}`)
        assert.equal(res.json().detail, missing.detail)
        const wrongSite = await as(method, url.replace('/S1/', '/S2/'), payload)
        assert.equal(wrongSite.statusCode, 404, `other site ${method}`)
      }
      assert.equal((await them('GET', URL)).json().items.length, 0)
      assert.equal((await as('GET', '/api/sites/NOPE/controllers')).statusCode, 404)
      assert.equal((await as('POST', '/api/sites/NOPE/controllers', controllerBody())).statusCode, 404)
      // A body the service refuses (the address, the route) is still the 404 for a site not in the organisation.
      for (const connection of [{ ipAddress: 'not an address!' }, { cipPath: '1,0,9' }]) {
        assert.equal((await as('POST', '/api/sites/NOPE/controllers', controllerBody({}, connection))).statusCode, 404, JSON.stringify(connection))
        assert.equal((await them('POST', '/api/sites/S2/controllers', controllerBody({}, connection))).statusCode, 404, JSON.stringify(connection))
        assert.equal((await as('POST', URL, controllerBody({}, connection))).statusCode, 400, JSON.stringify(connection))
      }
      assert.deepEqual((await as('GET', `${URL}/${mine.id}`)).json(), { ...mine })
    })

    it('members read; writes need admin or owner (403)', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      const member = await h.mintKey(org, 'member')
      const m = (method: string, url: string, payload?: object) => h.inject({ org, apiKey: member.plaintext }, { method: method as 'GET', url, payload })
      assert.equal((await m('GET', URL)).statusCode, 200)
      assert.equal((await m('GET', `${URL}/${c.id}`)).statusCode, 200)
      const before = await snapshot(h, org)
      assert.equal((await m('POST', URL, controllerBody())).statusCode, 403)
      assert.equal((await m('PUT', `${URL}/${c.id}`, { name: 'x' })).statusCode, 403)
      assert.equal((await m('POST', `${URL}/${c.id}/assign`, { edgeId: 'E' })).statusCode, 403)
      assert.equal((await m('POST', `${URL}/${c.id}/unassign`)).statusCode, 403)
      assert.equal((await m('DELETE', `${URL}/${c.id}`)).statusCode, 403)
      assert.equal(await snapshot(h, org), before)
      const owner = await h.mintKey(org, 'owner')
      assert.equal((await h.inject({ org, apiKey: owner.plaintext }, { method: 'POST', url: URL, payload: controllerBody() })).statusCode, 201)
      assert.equal((await h.inject(undefined, { url: URL, host: `${org.slug}.localhost` })).statusCode, 401)
    })
  })
}
