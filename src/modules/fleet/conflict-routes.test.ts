import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../../test/harness.ts'
import { withOrgScope } from '../../db/tenant-scope.ts'
import { applyPush } from './sync/apply-push.ts'
import type { Change } from './sync/outbox-port.ts'
import { change, controllerRow, localUpsert, siteRow } from './sync/test-support.ts'

const SERVER = 'srv_pit'

for (const dialect of testDialects()) {
  describe(`GET/POST /api/link/conflicts (cloud, ${dialect})`, () => {
    it('an organisation admin lists, reads, re-applies and dismisses; a member is refused; another organisation sees none', async (t) => {
      const h = await harness(t, dialect, { SITEGRID_MODE: 'cloud' })
      const { org, key } = await h.orgWithKey('admin')
      const cred = { org, apiKey: key }
      await h.handle.db
        .insertInto('sites')
        .values(siteRow(org.id, 'S1') as never)
        .execute()
      const changes: Change[] = []
      for (const n of [1, 2]) {
        const base = await localUpsert(h.handle.db, 'controllers', controllerRow(org.id, 'S1', `plc${n}`))
        await localUpsert(h.handle.db, 'controllers', controllerRow(org.id, 'S1', `plc${n}`, { name: 'cloud' }))
        changes.push(change(n, 'controllers', controllerRow(org.id, 'S1', `plc${n}`, { name: `site ${n}` }), { base }))
      }
      const pushed = await withOrgScope(org.id, () =>
        applyPush({ handle: h.appHandle, clock: h.clock }, { orgId: org.id, serverId: SERVER, sites: ['S1'], epoch: 'e', after: { tx: 0, seq: 0 }, changes }),
      )
      assert.equal(pushed.conflicts, 2)

      const list = await h.inject(cred, { method: 'GET', url: '/api/link/conflicts?unresolved=true&limit=10' })
      assert.equal(list.statusCode, 200, list.body)
      const items = list.json().items as Array<{ id: string; key: string[]; losingRow: { name: string }; winningRow: { name: string } }>
      assert.equal(items.length, 2)
      const one = items.find((i) => i.key[1] === 'plc1')!
      assert.equal(one.losingRow.name, 'site 1')
      assert.equal(one.winningRow.name, 'cloud')
      const read = await h.inject(cred, { method: 'GET', url: `/api/link/conflicts/${one.id}` })
      assert.equal(read.statusCode, 200)
      assert.equal(read.json().id, one.id)

      const reapplied = await h.inject(cred, { method: 'POST', url: `/api/link/conflicts/${one.id}/reapply` })
      assert.equal(reapplied.statusCode, 200, reapplied.body)
      assert.equal(reapplied.json().resolution, 'reapplied')
      const plc1 = await h.handle.db.selectFrom('controllers').select('name').where('org_id', '=', org.id).where('id', '=', 'plc1').executeTakeFirstOrThrow()
      assert.equal(plc1.name, 'site 1')
      // A normal local change of the cloud: the outbox sends it down to the site.
      const recorded = await h.handle.db
        .selectFrom('link_outbox')
        .select(['origin', 'row'])
        .where('org_id', '=', org.id)
        .where('table_name', '=', 'controllers')
        .where('row_key', '=', '["S1","plc1"]')
        .orderBy('seq', 'desc')
        .executeTakeFirstOrThrow()
      assert.equal(recorded.origin, '')
      assert.equal(JSON.parse(recorded.row).name, 'site 1')
      const again = await h.inject(cred, { method: 'POST', url: `/api/link/conflicts/${one.id}/dismiss` })
      assert.equal(again.statusCode, 409)
      assert.match(String(again.headers['content-type']), /^application\/problem\+json/)
      assert.equal(again.json().code, 'Conflict')

      const other = items.find((i) => i.key[1] === 'plc2')!
      const dismissed = await h.inject(cred, { method: 'POST', url: `/api/link/conflicts/${other.id}/dismiss` })
      assert.equal(dismissed.statusCode, 200)
      assert.equal(dismissed.json().resolution, 'dismissed')
      const audit = await h.handle.db
        .selectFrom('audit_events')
        .select(['action', 'target'])
        .where('org_id', '=', org.id)
        .where('action', 'like', 'link_conflict.%')
        .execute()
      assert.deepEqual(audit.map((a) => a.action).sort(), ['link_conflict.dismissed', 'link_conflict.reapplied'])
      assert.equal((await h.inject(cred, { method: 'GET', url: '/api/link/conflicts?unresolved=true' })).json().items.length, 0)

      const member = await h.mintKey(org, 'member')
      assert.equal((await h.inject({ org, apiKey: member.plaintext }, { method: 'GET', url: '/api/link/conflicts' })).statusCode, 403)
      const stranger = await h.orgWithKey('owner')
      const foreign = await h.inject({ org: stranger.org, apiKey: stranger.key }, { method: 'GET', url: `/api/link/conflicts/${one.id}` })
      assert.equal(foreign.statusCode, 404)
      const bad = await h.inject(cred, { method: 'GET', url: '/api/link/conflicts?cursor=nonsense' })
      assert.equal(bad.statusCode, 400)
    })
  })
}

describe('GET /api/link/conflicts (site server, sqlite)', () => {
  it('an admin reads the conflicts the cloud sent; resolving is the cloud’s', async (t) => {
    const h = await harness(t, 'sqlite', { SITEGRID_MODE: 'site' })
    const { org, key } = await h.orgWithKey('admin')
    const cred = { org, apiKey: key }
    await h.handle.db
      .insertInto('link_conflicts')
      .values({
        org_id: org.id,
        id: 'lcf_1',
        server_id: SERVER,
        table_name: 'controllers',
        site_code: 'S1',
        row_key: '["S1","plc1"]',
        losing_op: 'upsert',
        losing_row: JSON.stringify(controllerRow(org.id, 'S1', 'plc1')),
        losing_at: 1,
        winning_op: 'delete',
        winning_row: null,
        recorded_at: 2,
        resolved_at: null,
        resolved_by: null,
        resolution: null,
      })
      .execute()
    const list = await h.inject(cred, { method: 'GET', url: '/api/link/conflicts' })
    assert.equal(list.statusCode, 200, list.body)
    assert.equal(list.json().items[0].winningOp, 'delete')
    assert.equal((await h.inject(cred, { method: 'POST', url: '/api/link/conflicts/lcf_1/reapply' })).statusCode, 404)
    assert.equal((await h.inject(cred, { method: 'POST', url: '/api/link/conflicts/lcf_1/dismiss' })).statusCode, 404)
  })
})
