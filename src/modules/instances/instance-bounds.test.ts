import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { createController, equipmentSetup, rowCount, snapshot } from '../controllers/test-support.ts'
import { INSTANCE_LIMITS as L } from './limits.ts'

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
  describe(`${dialect}: instance bounds`, () => {
    it('field bounds hold at both sides; wrong types, nulls where not nullable and unknown fields are 400s naming the field', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      let n = 0
      const cases: Array<[string, unknown, number]> = [
        ['id', '', 400],
        ['id', 'i'.repeat(100), 201],
        ['id', 'j'.repeat(101), 400],
        ['id', 'has space', 400],
        ['id', 'a/b', 400],
        ['id', '.hidden', 400],
        ['id', 'CV-1.a:b_c', 201],
        ['name', '', 400],
        ['name', 'n'.repeat(200), 201],
        ['name', 'n'.repeat(201), 400],
        ['name', null, 400],
        ['name', 5, 400],
        ['typeId', '', 400],
        ['typeId', 't'.repeat(100), 201],
        ['typeId', 't'.repeat(101), 400],
        ['typeVersion', '', 201],
        ['typeVersion', 'v'.repeat(50), 201],
        ['typeVersion', 'v'.repeat(51), 400],
        ['typeVersion', null, 201],
        ['typeVersion', 2, 400],
        ['assetNumber', '', 400],
        ['assetNumber', 'a'.repeat(100), 201],
        ['assetNumber', 'a'.repeat(101), 400],
        ['assetNumber', null, 400],
        ['area', '', 201],
        ['area', 'r'.repeat(100), 201],
        ['area', 'r'.repeat(101), 400],
        ['area', null, 201],
        ['controllerId', '', 400],
        ['controllerId', null, 400],
        ['controllerId', 7, 400],
        ['tagMappings', { a: 'x' }, 201],
        ['tagMappings', { a: 1 }, 400],
        ['tagMappings', { a: '' }, 400],
        ['tagMappings', { '': 'x' }, 400],
        ['tagMappings', { ['k'.repeat(L.tagKeyMaxLength)]: 'v'.repeat(L.tagValueMaxLength) }, 201],
        ['tagMappings', { ['k'.repeat(L.tagKeyMaxLength + 1)]: 'v' }, 400],
        ['tagMappings', { k: 'v'.repeat(L.tagValueMaxLength + 1) }, 400],
        ['tagMappings', ['x'], 400],
        ['tagMappings', null, 400],
        ['tagMappings', 'a=b', 400],
        ['tagMappings', Object.fromEntries(Array.from({ length: L.tagMappingsMaxKeys }, (_, i) => [`t${i}`, 'x'])), 201],
        ['tagMappings', Object.fromEntries(Array.from({ length: L.tagMappingsMaxKeys + 1 }, (_, i) => [`t${i}`, 'x'])), 400],
        ['config', { any: [1, 'two', { three: true }, null] }, 201],
        ['config', [], 400],
        ['config', null, 400],
        ['config', 'x', 400],
        ['config', Object.fromEntries(Array.from({ length: L.configMaxKeys }, (_, i) => [`c${i}`, i])), 201],
        ['config', Object.fromEntries(Array.from({ length: L.configMaxKeys + 1 }, (_, i) => [`c${i}`, i])), 400],
        ['config', { ['k'.repeat(L.configKeyMaxLength + 1)]: 1 }, 400],
        ['config', { '': 1 }, 400],
      ]
      for (const [field, value, status] of cases) {
        const res = await as('POST', URL, instanceBody(c.id, { id: field === 'id' ? value : `I${n}`, [field]: value }))
        assert.equal(res.statusCode, status, `${field} = ${JSON.stringify(value).slice(0, 60)}: ${res.body.slice(0, 300)}`)
        if (status === 201) n++
        else
          assert.ok(
            res.json().errors.some((e: { pointer: string }) => e.pointer.startsWith(`/${field}`)),
            `${field}: ${res.body.slice(0, 300)}`,
          )
      }
      for (const field of ['id', 'name', 'typeId', 'assetNumber', 'controllerId']) {
        const body: Record<string, unknown> = instanceBody(c.id, { id: 'REQ' })
        delete body[field]
        const res = await as('POST', URL, body)
        assert.equal(res.statusCode, 400)
        assert.equal(res.json().errors[0].pointer, `/${field}`)
      }
      const unknown = await as('POST', URL, instanceBody(c.id, { id: 'U', siteId: 'S1' }))
      assert.equal(unknown.json().errors[0].pointer, '/siteId')
      assert.equal(await rowCount(h, 'instances', org.id), n)
    })

    it('tagMappings and config are bounded in total bytes and config in depth', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      // 200 keys × ~330 bytes ≈ 66 KB of JSON: over the 64 KiB total although each key and value is within bounds.
      const bigTags = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`tag${i}`.padEnd(L.tagKeyMaxLength - 50, 'k'), 'v'.repeat(180)]))
      const tooBig = await as('POST', URL, instanceBody(c.id, { tagMappings: bigTags }))
      assert.equal(tooBig.statusCode, 400)
      assert.equal(tooBig.json().errors[0].pointer, '/tagMappings')
      const bigConfig = await as('POST', URL, instanceBody(c.id, { config: { blob: 'x'.repeat(L.configMaxBytes) } }))
      assert.equal(bigConfig.statusCode, 400)
      assert.equal(bigConfig.json().errors[0].pointer, '/config')
      const okConfig = await as('POST', URL, instanceBody(c.id, { id: 'OK', config: { blob: 'x'.repeat(L.configMaxBytes - 20) } }))
      assert.equal(okConfig.statusCode, 201)
      let deep: unknown = 1
      for (let i = 0; i < L.configMaxDepth; i++) deep = { d: deep }
      assert.equal((await as('POST', URL, instanceBody(c.id, { id: 'DEEP8', config: deep as object }))).statusCode, 201)
      const tooDeep = await as('POST', URL, instanceBody(c.id, { id: 'DEEP9', config: { d: deep } }))
      assert.equal(tooDeep.statusCode, 400)
      assert.equal(tooDeep.json().errors[0].pointer, '/config')
      assert.equal(await rowCount(h, 'instances', org.id), 2)
    })

    it('PUT changes only the fields present, a null clears typeVersion and area, maps are replaced whole; refused updates change nothing', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      const c2 = await createController(as)
      await as('POST', URL, instanceBody(c.id, { typeVersion: '1', area: 'North', tagMappings: { a: 'A', b: 'B' }, config: { x: 1, y: 2 } }))
      h.clock.advance(1000)
      const res = await as('PUT', `${URL}/CV-101`, { area: null, tagMappings: { c: 'C' }, controllerId: c2.id })
      assert.equal(res.statusCode, 200)
      const u = res.json()
      assert.deepEqual([u.area, u.typeVersion, u.tagMappings, u.config, u.controllerId, u.name], [null, '1', { c: 'C' }, { x: 1, y: 2 }, c2.id, 'Conveyor 101'])
      assert.notEqual(u.updatedAt, u.createdAt)
      const before = await snapshot(h, org)
      for (const body of [
        { id: 'NEW' },
        { name: null },
        { name: '' },
        { tagMappings: null },
        { config: null },
        { colour: 'red' },
        { typeVersion: 'v'.repeat(51) },
        { assetNumber: null },
      ]) {
        assert.equal((await as('PUT', `${URL}/CV-101`, body)).statusCode, 400, JSON.stringify(body))
      }
      assert.equal(await snapshot(h, org), before)
      assert.equal((await as('PUT', `${URL}/NOPE`, { name: 'x' })).statusCode, 404)
    })
  })
}
