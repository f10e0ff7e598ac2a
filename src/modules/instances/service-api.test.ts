import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { createControllersService } from '../controllers/service.ts'
import { createController, equipmentSetup } from '../controllers/test-support.ts'
import { createSitesService } from '../sites/service.ts'
import { createInstancesService } from './service.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: instances and controllers services for other areas`, () => {
    it("existingIds, listTagMappings and summary answer for the organisation's site only", async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as, 'S1', { name: 'Crusher PLC', assetNumber: 'PLC-9' }, { cipPath: '1,0' })
      await as('POST', '/api/sites/S1/instances', {
        id: 'CV-1',
        name: 'n',
        typeId: 't',
        assetNumber: 'a',
        controllerId: c.id,
        tagMappings: { run: 'R', speed: 'S' },
      })
      await as('POST', '/api/sites/S1/instances', { id: 'CV-2', name: 'n', typeId: 't', assetNumber: 'a', controllerId: c.id })
      const other = await h.orgWithKey('owner')
      const { handle, clock } = h
      const sites = createSitesService({ handle, clock, dependents: [] })
      const controllers = createControllersService({ handle, clock, sites, load: (db, o, s, ids) => instances.controllerLoad(db, o, s, ids) })
      const instances = createInstancesService({ handle, clock, sites, controllers })

      assert.deepEqual([...(await instances.existingIds(org.id, 'S1', ['CV-1', 'CV-2', 'CV-3', 'CV-1']))].sort(), ['CV-1', 'CV-2'])
      assert.deepEqual([...(await instances.existingIds(other.org.id, 'S1', ['CV-1']))], [])
      // Every instance, one that maps no tag too (the live push names it as such rather than as unknown).
      assert.deepEqual(await instances.listTagMappings(org.id, 'S1'), [
        { instanceId: 'CV-1', controllerId: c.id, tagMappings: { run: 'R', speed: 'S' } },
        { instanceId: 'CV-2', controllerId: c.id, tagMappings: {} },
      ])
      assert.deepEqual(await instances.listTagMappings(other.org.id, 'S1'), [])
      assert.deepEqual(await controllers.summary(org.id, 'S1'), [
        {
          id: c.id,
          name: 'Crusher PLC',
          assetNumber: 'PLC-9',
          platform: 'RockwellLogix',
          protocol: 'EtherNet/IP',
          ipAddress: '10.20.1.15',
          cipPath: '1,0',
          edgeId: null,
          pollIntervalMs: 1000,
        },
      ])
      await assert.rejects(controllers.summary(other.org.id, 'S1'), { code: 'NotFound' })
      assert.deepEqual([...(await controllers.existingIds(org.id, 'S1', [c.id, 'ctl_x']))], [c.id])
    })
  })
}
