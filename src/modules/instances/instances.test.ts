import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { createController, equipmentSetup, rowCount, snapshot } from '../controllers/test-support.ts'

const URL = '/api/sites/S1/instances'

const instanceBody = (controllerId: string, over: Record<string, unknown> = {}) => ({
  id: 'CV-101',
  name: 'Conveyor 101',
  typeId: 'conveyor',
  assetNumber: 'A-101',
  controllerId,
  ...over,
})

for (const dialect of testDialects()) {
  describe(`${dialect}: instances`, () => {
    it('create answers 201 with every field of 2.4; optional fields default to null or {}', async (t) => {
      const { as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      const full = await as(
        'POST',
        URL,
        instanceBody(c.id, {
          typeVersion: '2.1',
          area: 'Stockpile',
          tagMappings: { running: 'Program:Main.CV101.Run' },
          config: { beltWidthMm: 1200, sensors: [{ kind: 'speed' }], note: null },
        }),
      )
      assert.equal(full.statusCode, 201)
      const body = full.json()
      assert.deepEqual(
        { ...body, createdAt: undefined, updatedAt: undefined },
        {
          id: 'CV-101',
          siteId: 'S1',
          name: 'Conveyor 101',
          typeId: 'conveyor',
          typeVersion: '2.1',
          assetNumber: 'A-101',
          controllerId: c.id,
          area: 'Stockpile',
          tagMappings: { running: 'Program:Main.CV101.Run' },
          config: { beltWidthMm: 1200, sensors: [{ kind: 'speed' }], note: null },
          createdAt: undefined,
          updatedAt: undefined,
        },
      )
      assert.deepEqual((await as('GET', `${URL}/CV-101`)).json(), body)
      const bare = (await as('POST', URL, instanceBody(c.id, { id: 'CV-102' }))).json()
      assert.deepEqual([bare.typeVersion, bare.area, bare.tagMappings, bare.config], [null, null, {}, {}])
    })

    it('id is unique per site (409) and may repeat in another site', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      await as('POST', '/api/sites', { code: 'S2', name: 'Other' })
      const c = await createController(as)
      const c2 = await createController(as, 'S2')
      assert.equal((await as('POST', URL, instanceBody(c.id))).statusCode, 201)
      const before = await snapshot(h, org)
      const dup = await as('POST', URL, instanceBody(c.id, { name: 'other' }))
      assert.equal(dup.statusCode, 409)
      assert.equal(dup.json().code, 'Conflict')
      assert.equal(dup.json().errors[0].pointer, '/id')
      assert.equal(await snapshot(h, org), before)
      assert.equal((await as('POST', '/api/sites/S2/instances', instanceBody(c2.id))).statusCode, 201)
    })

    it('controllerId must name a controller of the same site: otherwise 422 naming /controllerId, nothing written', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      await as('POST', '/api/sites', { code: 'S2', name: 'Other' })
      const elsewhere = await createController(as, 'S2')
      const other = await h.orgWithKey('owner')
      await h.inject({ org: other.org, apiKey: other.key }, { method: 'POST', url: '/api/sites', payload: { code: 'S1', name: 'x' } })
      const foreign = (
        await h.inject(
          { org: other.org, apiKey: other.key },
          {
            method: 'POST',
            url: '/api/sites/S1/controllers',
            payload: { name: 'p', platform: 0, assetNumber: 'a', connection: { protocol: 'x', ipAddress: 'h' } },
          },
        )
      ).json()
      const mine = await createController(as)
      const before = await snapshot(h, org)
      for (const controllerId of [elsewhere.id, foreign.id, 'ctl_nope']) {
        const res = await as('POST', URL, instanceBody(controllerId))
        assert.equal(res.statusCode, 422, controllerId)
        assert.equal(res.json().code, 'UnprocessableEntity')
        assert.equal(res.json().errors[0].pointer, '/controllerId')
      }
      assert.equal(await snapshot(h, org), before)
      await as('POST', URL, instanceBody(mine.id))
      const put = await as('PUT', `${URL}/CV-101`, { controllerId: elsewhere.id })
      assert.equal(put.statusCode, 422)
      assert.equal(put.json().errors[0].pointer, '/controllerId')
      assert.equal((await as('GET', `${URL}/CV-101`)).json().controllerId, mine.id)
    })

    it('list is paged by id and filters by controller, area and typeId', async (t) => {
      const { as } = await equipmentSetup(t, dialect)
      const a = await createController(as)
      const b = await createController(as)
      const rows: Array<[string, string, string, string]> = [
        ['I5', a.id, 'North', 'pump'],
        ['I1', a.id, 'North', 'conveyor'],
        ['I3', b.id, 'South', 'conveyor'],
        ['I2', b.id, 'North', 'pump'],
        ['I4', a.id, 'South', 'pump'],
      ]
      for (const [id, controllerId, area, typeId] of rows) await as('POST', URL, instanceBody(controllerId, { id, area, typeId }))
      const ids = async (query: string) => (await as('GET', `${URL}?${query}`)).json().items.map((i: { id: string }) => i.id)
      const first = (await as('GET', `${URL}?limit=2`)).json()
      assert.deepEqual(
        first.items.map((i: { id: string }) => i.id),
        ['I1', 'I2'],
      )
      const second = (await as('GET', `${URL}?limit=2&cursor=${first.nextCursor}`)).json()
      assert.deepEqual(
        second.items.map((i: { id: string }) => i.id),
        ['I3', 'I4'],
      )
      assert.deepEqual(await ids(`controllerId=${a.id}`), ['I1', 'I4', 'I5'])
      assert.deepEqual(await ids('area=North'), ['I1', 'I2', 'I5'])
      assert.deepEqual(await ids('typeId=pump&area=North'), ['I2', 'I5'])
      assert.deepEqual(await ids('typeId=valve'), [])
      assert.equal((await as('GET', `${URL}?limit=1001`)).statusCode, 400)
      assert.equal((await as('GET', `${URL}?cursor=zzz`)).statusCode, 400)
    })

    it('DELETE removes the instance (204), then the uniform 404', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      await as('POST', URL, instanceBody(c.id))
      assert.equal((await as('DELETE', `${URL}/CV-101`)).statusCode, 204)
      assert.equal(await rowCount(h, 'instances', org.id), 0)
      assert.equal((await as('DELETE', `${URL}/CV-101`)).statusCode, 404)
      assert.equal((await as('GET', `${URL}/CV-101`)).statusCode, 404)
    })

    it("another organisation's or another site's instance is the uniform 404 and is not changed; members read but cannot write", async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      await as('POST', '/api/sites', { code: 'S2', name: 'Other' })
      const c = await createController(as)
      await as('POST', URL, instanceBody(c.id))
      const other = await h.orgWithKey('owner')
      const them = (method: string, url: string, payload?: object) => h.inject({ org: other.org, apiKey: other.key }, { method: method as 'GET', url, payload })
      await them('POST', '/api/sites', { code: 'S1', name: 'x' })
      const missing = (await as('GET', `${URL}/NOPE`)).json()
      const before = await snapshot(h, org)
      for (const [method, url, payload] of [
        ['GET', `${URL}/CV-101`],
        ['PUT', `${URL}/CV-101`, { name: 'x' }],
        ['DELETE', `${URL}/CV-101`],
      ] as const) {
        const res = await them(method, url, payload)
        assert.equal(res.statusCode, 404)
        assert.equal(res.json().detail, missing.detail)
        assert.equal((await as(method, url.replace('/S1/', '/S2/'), payload)).statusCode, 404)
      }
      assert.equal((await them('GET', URL)).json().items.length, 0)
      assert.equal(await snapshot(h, org), before)
      const member = await h.mintKey(org, 'member')
      const m = (method: string, url: string, payload?: unknown) =>
        h.inject({ org, apiKey: member.plaintext }, { method: method as 'GET', url, payload: payload as object })
      assert.equal((await m('GET', URL)).statusCode, 200)
      assert.equal((await m('GET', `${URL}/CV-101`)).statusCode, 200)
      assert.equal((await m('POST', URL, instanceBody(c.id, { id: 'M' }))).statusCode, 403)
      assert.equal((await m('PUT', `${URL}/CV-101`, { name: 'x' })).statusCode, 403)
      assert.equal((await m('DELETE', `${URL}/CV-101`)).statusCode, 403)
      assert.equal((await m('POST', `${URL}/bulk`, [instanceBody(c.id, { id: 'M' })])).statusCode, 403)
      assert.equal(await snapshot(h, org), before)
    })

    it('deleting a site previews and then removes its controllers and instances', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      await createController(as)
      await as('POST', URL, instanceBody(c.id))
      const preview = await as('DELETE', '/api/sites/S1')
      assert.equal(preview.statusCode, 409)
      assert.equal(preview.json().wouldDelete.controllers, 2)
      assert.equal(preview.json().wouldDelete.instances, 1)
      assert.equal(await rowCount(h, 'instances', org.id), 1)
      assert.equal((await as('DELETE', '/api/sites/S1?confirm=S1')).statusCode, 204)
      assert.equal(await rowCount(h, 'controllers', org.id), 0)
      assert.equal(await rowCount(h, 'instances', org.id), 0)
    })
  })
}
