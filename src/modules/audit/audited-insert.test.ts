import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { testDialects } from '../../../test/harness.ts'
import { controllerBody, equipmentSetup } from '../controllers/test-support.ts'
import { compiledRowInsert } from './store.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: audited inserts`, () => {
    it('a controller create writes its audit row (actor, action, target, detail) with it; a refused duplicate writes neither', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const keyId = (await h.handle.db.selectFrom('api_keys').select('id').where('org_id', '=', org.id).executeTakeFirstOrThrow()).id
      const body = controllerBody()
      const made = await as('POST', '/api/sites/S1/controllers', body)
      assert.equal(made.statusCode, 201)
      const audit = () =>
        h.handle.db
          .selectFrom('audit_events')
          .select(['actor_kind', 'actor_id', 'action', 'target', 'detail'])
          .where('org_id', '=', org.id)
          .where('action', '=', 'controller.created')
          .execute()
      assert.deepEqual(await audit(), [
        {
          actor_kind: 'apiKey',
          actor_id: keyId,
          action: 'controller.created',
          target: `S1/${made.json().id}`,
          detail: JSON.stringify({ assetNumber: body.assetNumber }),
        },
      ])
      const taken = await as('POST', '/api/sites/S1/controllers', { ...body, name: 'Another' })
      assert.equal(taken.statusCode, 409)
      assert.equal((await audit()).length, 1, 'no audit row without its controller')
      const foreign = await as('POST', '/api/sites/NOPE/controllers', controllerBody())
      assert.equal(foreign.statusCode, 404)
      assert.equal((await audit()).length, 1)
    })

    it('compiledRowInsert: one text for every row of a shape, its values bound in column order; a value that is not a parameter is a TypeError', async (t) => {
      const { h } = await equipmentSetup(t, dialect)
      const row = (id: string) => ({ org_id: 'org_X', id, at: 1, actor_kind: 'cli', actor_id: 'cli', action: 'a', target: 't', detail: null })
      const first = compiledRowInsert(h.handle.db, dialect, { table: 'audit_events', row: row('aud_1') })
      const second = compiledRowInsert(h.handle.db, dialect, { table: 'audit_events', row: row('aud_2') })
      assert.equal(first.sql, second.sql)
      assert.deepEqual(second.parameters, ['org_X', 'aud_2', 1, 'cli', 'cli', 'a', 't', null])
      // Of a shape already met, and of a new one (no detail column).
      const fragment = { ...row('aud_3'), at: sql<number>`1` }
      assert.throws(() => compiledRowInsert(h.handle.db, dialect, { table: 'audit_events', row: fragment as never }), TypeError)
      const { detail: _detail, ...fresh } = fragment
      assert.throws(() => compiledRowInsert(h.handle.db, dialect, { table: 'audit_events', row: fresh as never }), TypeError)
    })
  })
}
