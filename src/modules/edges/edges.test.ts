// Issue 30: GET /api/sites/{siteId}/edges/{edgeId}/config, with its ETag.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { createController, equipmentSetup } from '../controllers/test-support.ts'

const CONFIG = '/api/sites/S1/edges/GW-1/config'

for (const dialect of testDialects()) {
  describe(`${dialect}: edge gateway configuration`, () => {
    it("answers the edge's controllers with their connection, CIP route and instances' tag mappings, and leaves other edges' out", async (t) => {
      const { as } = await equipmentSetup(t, dialect)
      const none = await as('GET', CONFIG)
      assert.equal(none.statusCode, 404, 'an edge with nothing assigned is unknown')
      assert.equal(none.json().code, 'NotFound')

      const polled = await createController(as, 'S1', {}, { cipPath: '1,0', pollIntervalMs: 500 })
      const other = await createController(as)
      assert.equal((await as('POST', `/api/sites/S1/controllers/${polled.id}/assign`, { edgeId: 'GW-1', edgePlcId: 'plc-7' })).statusCode, 200)
      assert.equal((await as('POST', `/api/sites/S1/controllers/${other.id}/assign`, { edgeId: 'GW-2' })).statusCode, 200)
      for (const [id, controllerId] of [
        ['PUMP-1', polled.id],
        ['FAN-1', other.id],
      ]) {
        const res = await as('POST', '/api/sites/S1/instances', {
          id,
          name: id,
          typeId: 'pump',
          assetNumber: `AN-${id}`,
          controllerId,
          tagMappings: { speed: `${id}.Speed`, running: `${id}.Run` },
        })
        assert.equal(res.statusCode, 201, res.body)
      }
      // An instance that maps no tag gives the gateway nothing to poll: left out.
      const unmapped = await as('POST', '/api/sites/S1/instances', { id: 'VALVE-1', name: 'V', typeId: 'valve', assetNumber: 'AN-V1', controllerId: polled.id })
      assert.equal(unmapped.statusCode, 201, unmapped.body)

      const res = await as('GET', CONFIG)
      assert.equal(res.statusCode, 200)
      const config = res.json()
      assert.equal(res.headers.etag, `"${config.version}"`)
      assert.equal(config.siteId, 'S1')
      assert.equal(config.edgeId, 'GW-1')
      assert.deepEqual(
        config.controllers.map((c: { id: string }) => c.id),
        [polled.id],
      )
      const [controller] = config.controllers
      assert.equal(controller.edgePlcId, 'plc-7')
      assert.equal(controller.connection.ipAddress, '10.20.1.15')
      assert.equal(controller.connection.pollIntervalMs, 500)
      assert.equal(controller.connection.cipPath, '1,0')
      assert.equal(controller.cipRoute.hops.length, 1)
      assert.deepEqual(controller.instances, [{ id: 'PUMP-1', tagMappings: { speed: 'PUMP-1.Speed', running: 'PUMP-1.Run' } }])
    })

    it('an unchanged configuration answers 304 to its ETag; an edit of a controller or an instance, or a new one, changes the ETag', async (t) => {
      const { as } = await equipmentSetup(t, dialect)
      const controller = await createController(as)
      await as('POST', `/api/sites/S1/controllers/${controller.id}/assign`, { edgeId: 'GW-1' })
      const poll = (etag: string) => as('GET', CONFIG, undefined, { 'if-none-match': etag })
      let etag = (await as('GET', CONFIG)).headers.etag as string
      const seen = new Set([etag])

      const unchanged = await poll(etag)
      assert.equal(unchanged.statusCode, 304)
      assert.equal(unchanged.body, '')
      assert.equal(unchanged.headers.etag, etag)
      assert.equal((await poll(`"0", W/${etag}`)).statusCode, 304, 'a list of tags, and a weak one, compare')

      const edits: Array<[string, () => ReturnType<typeof as>]> = [
        ['a controller edit', () => as('PUT', `/api/sites/S1/controllers/${controller.id}`, { connection: { pollIntervalMs: 2000 } })],
        [
          'a new instance',
          () => as('POST', '/api/sites/S1/instances', { id: 'P1', name: 'P1', typeId: 'pump', assetNumber: 'AN-P1', controllerId: controller.id }),
        ],
        ['an instance edit', () => as('PUT', '/api/sites/S1/instances/P1', { tagMappings: { speed: 'P1.Speed' } })],
        ['an instance removed', () => as('DELETE', '/api/sites/S1/instances/P1')],
        ['another controller assigned', async () => as('POST', `/api/sites/S1/controllers/${(await createController(as)).id}/assign`, { edgeId: 'GW-1' })],
      ]
      for (const [what, edit] of edits) {
        const done = await edit()
        assert.ok(done.statusCode < 300, `${what}: ${done.statusCode} ${done.body}`)
        const res = await poll(etag)
        assert.equal(res.statusCode, 200, `${what} changes the configuration`)
        etag = res.headers.etag as string
        assert.ok(!seen.has(etag), `${what}: a new ETag`)
        seen.add(etag)
        assert.equal((await poll(etag)).statusCode, 304)
      }
      assert.equal((await as('POST', `/api/sites/S1/controllers/${controller.id}/unassign`)).statusCode, 200)
      const left = await poll(etag)
      assert.equal(left.statusCode, 200, 'an unassignment changes the configuration')
      assert.equal(left.json().controllers.length, 1)
    })

    it('a write by another path (an upsert, as the fleet link and a tenant import make) moves the version too', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const controller = await createController(as)
      await as('POST', `/api/sites/S1/controllers/${controller.id}/assign`, { edgeId: 'GW-1' })
      const etag = (await as('GET', CONFIG)).headers.etag as string
      const row = await h.handle.db.selectFrom('controllers').selectAll().where('org_id', '=', org.id).where('id', '=', controller.id).executeTakeFirstOrThrow()
      await h.handle.db
        .insertInto('controllers')
        .values({ ...row, name: 'renamed by an upsert' })
        .onConflict((oc) => oc.columns(['org_id', 'site_code', 'id']).doUpdateSet({ name: 'renamed by an upsert' }))
        .execute()
      const res = await as('GET', CONFIG, undefined, { 'if-none-match': etag })
      assert.equal(res.statusCode, 200)
      assert.notEqual(res.headers.etag, etag)
      assert.equal(res.json().controllers[0].name, 'renamed by an upsert')
    })

    it('an unknown site is the uniform 404; a key restricted to another site gets the same 404; an edge id over 50 characters is a 400', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      await as('POST', `/api/sites/S1/controllers/${(await createController(as)).id}/assign`, { edgeId: 'GW-1' })
      const unknown = await as('GET', '/api/sites/NOPE/edges/GW-1/config')
      assert.equal(unknown.statusCode, 404)
      assert.equal(unknown.json().code, 'NotFound')
      assert.equal((await as('POST', '/api/sites', { code: 'S2', name: 'Other' })).statusCode, 201)
      await as('POST', `/api/sites/S2/controllers/${(await createController(as, 'S2')).id}/assign`, { edgeId: 'GW-1' })
      const minted = await as('POST', '/api/admin/api-keys', {
        role: 'member',
        name: 'GW-1',
        expiresAt: new Date(h.clock.now() + 86_400_000).toISOString(),
        siteId: 'S2',
      })
      const gateway = { org, apiKey: minted.json().plaintext as string }
      assert.equal((await h.inject(gateway, { url: '/api/sites/S2/edges/GW-1/config' })).statusCode, 200)
      const elsewhere = await h.inject(gateway, { url: CONFIG })
      assert.equal(elsewhere.statusCode, 404)
      assert.equal(elsewhere.json().code, 'NotFound')
      const long = await as('GET', `/api/sites/S1/edges/${'g'.repeat(51)}/config`)
      assert.equal(long.statusCode, 400)
      assert.equal(long.json().code, 'ValidationFailed')
    })

    it('a site with edge-polled controllers and instances is deleted whole (its version row goes with it)', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const controller = await createController(as)
      await as('POST', `/api/sites/S1/controllers/${controller.id}/assign`, { edgeId: 'GW-1' })
      await as('POST', '/api/sites/S1/instances', { id: 'P1', name: 'P1', typeId: 'pump', assetNumber: 'AN-P1', controllerId: controller.id })
      const before = (await as('GET', CONFIG)).json().version as number
      const removed = await as('DELETE', '/api/sites/S1?confirm=S1')
      assert.equal(removed.statusCode, 204, removed.body)
      const rows = await h.handle.db.selectFrom('edge_config_versions').select('version').where('org_id', '=', org.id).execute()
      assert.equal(rows.length, 0)
      assert.equal((await as('POST', '/api/sites', { code: 'S1', name: 'Plant again' })).statusCode, 201)
      await as('POST', `/api/sites/S1/controllers/${(await createController(as)).id}/assign`, { edgeId: 'GW-1' })
      const again = (await as('GET', CONFIG)).json().version as number
      assert.ok(again > before, 'the version never goes back, so an old ETag cannot match the new site')
    })
  })
}
