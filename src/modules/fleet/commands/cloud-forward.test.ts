import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { testDialects, type TestDialect } from '../../../../test/harness.ts'
import type { OrgId } from '../../../ids.ts'
import { addInstances, future, MIN, setup } from '../../alarms/test-helpers.ts'
import { currentCursor, readChanges } from '../outbox/store.ts'
import { republishPendingCommands } from './service.ts'
import { outboxSettled } from '../../../../test/support/fleet-link.ts'

/** A cloud cell's organisation with site S1 (an active alarm raised before S1 was linked) and a site server for S1. */
async function cloudSetup(t: TestContext, dialect: TestDialect) {
  const s = await setup(t, dialect, { SITEGRID_MODE: 'cloud' })
  const alarmId = (await s.post([s.ev('P1', 'HI_TEMP', 'active', s.t0)])).results[0]!.alarmId!
  const link = async (id: string, sites: string[], revokedAt: number | null = null) => {
    await s.h.handle.db
      .insertInto('site_servers')
      .values({
        org_id: s.org.id,
        id,
        name: `server ${id}`,
        sites: JSON.stringify(sites),
        code_hash: null,
        code_expires_at: null,
        credential_verifier: null,
        epoch: null,
        created_at: s.h.clock.now(),
        created_by: 'test',
        enrolled_at: null,
        revoked_at: revokedAt,
        revoked_by: null,
        last_contact_at: null,
        last_error: null,
        peer_versions: null,
        backlog: null,
      })
      .execute()
  }
  const commands = async () =>
    s.h.handle.db.selectFrom('link_commands').selectAll().where('org_id', '=', s.org.id).orderBy('created_at').orderBy('id').execute()
  return { ...s, alarmId, link, commands }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: cloud, alarm actions on a linked site's alarm are forwarded to its site server (issue 26)`, () => {
    it('acknowledge answers 202 with a pending command, leaves the alarm unchanged, stores one command and records it in the outbox', async (t) => {
      const { h, org, member, read, alarmId, link, commands } = await cloudSetup(t, dialect)
      await link('srv_1', ['S1'])
      const res = await member('POST', `/api/sites/S1/alarms/${alarmId}/acknowledge`, { comment: 'seen from head office' })
      assert.equal(res.statusCode, 202, res.body)
      const command = res.json()
      assert.match(command.commandId, /^cmd_[0-9A-Z]{26}$/)
      assert.deepEqual(
        [command.siteId, command.alarmId, command.action, command.body, command.status, command.settledAt, command.result],
        ['S1', alarmId, 'acknowledge', { comment: 'seen from head office' }, 'pending', null, null],
      )
      assert.equal(command.actor.kind, 'apiKey')
      const alarm = await read(alarmId)
      assert.equal(alarm.state, 'active_unacknowledged')
      assert.equal(alarm.history.length, 1)
      assert.equal((alarm as unknown as { pendingCommands: number }).pendingCommands, 1)
      const rows = await commands()
      assert.equal(rows.length, 1)
      assert.deepEqual(
        [rows[0]!.id, rows[0]!.status, rows[0]!.action, JSON.parse(rows[0]!.actor).kind],
        [command.commandId, 'pending', 'acknowledge', 'apiKey'],
      )
      const outbox = await h.handle.db
        .selectFrom('link_outbox')
        .select(['op', 'site_code', 'origin'])
        .where('org_id', '=', org.id)
        .where('table_name', '=', 'link_commands')
        .execute()
      assert.deepEqual(outbox, [{ op: 'upsert', site_code: 'S1', origin: '' }])
    })

    it('every action on one alarm is forwarded with its body (shelve, unshelve, out of service, return to service), in the order taken', async (t) => {
      const { h, admin, read, alarmId, link, commands } = await cloudSetup(t, dialect)
      await link('srv_1', ['S1'])
      const until = future(h, 30 * MIN)
      for (const [path, body] of [
        ['shelve', { comment: 'nuisance', until }],
        ['unshelve', { comment: 'fixed' }],
        ['out-of-service', { comment: 'maintenance' }],
        ['return-to-service', { comment: 'done' }],
      ] as const) {
        const res = await admin('POST', `/api/sites/S1/alarms/${alarmId}/${path}`, body)
        assert.equal(res.statusCode, 202, `${path}: ${res.body}`)
        assert.equal(res.json().action, path)
      }
      // The clock stands still in tests: created_at still orders them as taken.
      const rows = await commands()
      assert.deepEqual(
        rows.map((r) => [r.action, JSON.parse(r.body)]),
        [
          ['shelve', { comment: 'nuisance', until }],
          ['unshelve', { comment: 'fixed' }],
          ['out-of-service', { comment: 'maintenance' }],
          ['return-to-service', { comment: 'done' }],
        ],
      )
      assert.ok(rows.every((r, i) => i === 0 || r.created_at > rows[i - 1]!.created_at))
      assert.equal((await read(alarmId)).history.length, 1)
      const list = await admin('GET', `/api/sites/S1/alarms/${alarmId}/commands`)
      assert.equal(list.statusCode, 200, list.body)
      assert.deepEqual(
        list.json().items.map((c: { action: string; status: string }) => [c.action, c.status]),
        rows.map((r) => [r.action, 'pending']),
      )
      const pending = await admin('GET', '/api/link/commands?status=pending&limit=3')
      assert.equal(pending.statusCode, 200, pending.body)
      assert.equal(pending.json().items.length, 3)
      const rest = await admin('GET', `/api/link/commands?status=pending&cursor=${pending.json().nextCursor}`)
      assert.equal(rest.json().items.length, 1)
      assert.equal(rest.json().nextCursor, null)
      assert.equal((await admin('GET', '/api/link/commands?status=applied')).json().items.length, 0)
    })

    it('a linked site still checks the request as it would apply it: bad body 400, unknown alarm or site 404, a member may not shelve (403); nothing stored', async (t) => {
      const { h, admin, member, alarmId, link, commands } = await cloudSetup(t, dialect)
      await link('srv_1', ['S1'])
      const cases = [
        [admin, `/api/sites/S1/alarms/${alarmId}/shelve`, { comment: 'c' }, 400, 'ValidationFailed'],
        [admin, `/api/sites/S1/alarms/${alarmId}/shelve`, { comment: 'c', until: future(h, -MIN) }, 400, 'ValidationFailed'],
        [admin, `/api/sites/S1/alarms/${alarmId}/out-of-service`, {}, 400, 'ValidationFailed'],
        [member, `/api/sites/S1/alarms/${alarmId}/acknowledge`, { comment: '' }, 400, 'ValidationFailed'],
        [member, '/api/sites/S1/alarms/alm_NOPE/acknowledge', {}, 404, 'NotFound'],
        [member, `/api/sites/S9/alarms/${alarmId}/acknowledge`, {}, 404, 'NotFound'],
        [member, `/api/sites/S1/alarms/${alarmId}/shelve`, { comment: 'c', until: future(h, MIN) }, 403, 'Forbidden'],
      ] as const
      for (const [as, url, body, status, code] of cases) {
        const res = await as('POST', url, body)
        assert.equal(res.statusCode, status, `${url} ${JSON.stringify(body)}: ${res.body}`)
        assert.equal(res.json().code, code, url)
      }
      assert.equal((await commands()).length, 0)
    })

    it('bulk acknowledge on a linked site: 202, one pending command per alarm found, an unknown id refused NotFound', async (t) => {
      const { member, post, ev, t0, read, alarmId, link, commands } = await cloudSetup(t, dialect)
      const other = (await post([ev('P2', 'LO_LEVEL', 'active', t0)])).results[0]!.alarmId!
      await link('srv_1', ['S1'])
      const res = await member('POST', '/api/sites/S1/alarms/acknowledge', { alarmIds: [alarmId, 'alm_NOPE', other], comment: 'handover' })
      assert.equal(res.statusCode, 202, res.body)
      assert.equal(res.json().pending, 2)
      assert.deepEqual(
        res.json().results.map((r: { alarmId: string; status: string; code?: string }) => [r.alarmId, r.status, r.code]),
        [
          [alarmId, 'pending', undefined],
          ['alm_NOPE', 'refused', 'NotFound'],
          [other, 'pending', undefined],
        ],
      )
      const rows = await commands()
      assert.deepEqual(
        rows.map((r) => [r.alarm_id, r.action, JSON.parse(r.body)]),
        [
          [alarmId, 'acknowledge', { comment: 'handover' }],
          [other, 'acknowledge', { comment: 'handover' }],
        ],
      )
      assert.equal((await read(other)).state, 'active_unacknowledged')
    })

    it('alarm events for a linked site are refused 409 AlarmsFromSiteServer and stored nowhere; an unlinked site accepts them', async (t) => {
      const { admin, member, ev, t0, rows, link } = await cloudSetup(t, dialect)
      assert.equal((await admin('POST', '/api/sites', { code: 'S2', name: 'Site 2' })).statusCode, 201)
      await addInstances(admin, 'S2', ['Q1'])
      await link('srv_1', ['S1'])
      const [events, alarms] = [await rows('alarm_events'), await rows('alarms')]
      const refused = await member('POST', '/api/sites/S1/alarms/events', { events: [ev('P1', 'LO_TEMP', 'active', t0)] })
      assert.equal(refused.statusCode, 409, refused.body)
      assert.equal(refused.json().code, 'AlarmsFromSiteServer')
      assert.match(refused.json().detail, /site server/)
      assert.deepEqual([await rows('alarm_events'), await rows('alarms')], [events, alarms])
      const accepted = await member('POST', '/api/sites/S2/alarms/events', { events: [ev('Q1', 'LO_TEMP', 'active', t0)] })
      assert.equal(accepted.statusCode, 200, accepted.body)
      assert.equal(accepted.json().accepted, 1)
    })

    it("an unlinked site, or one whose only site server is revoked, applies actions at once (200) and keeps no command; another site's server does not link it", async (t) => {
      const { h, member, alarmId, link, commands } = await cloudSetup(t, dialect)
      await link('srv_old', ['S1'], h.clock.now())
      await link('srv_2', ['S2'])
      const res = await member('POST', `/api/sites/S1/alarms/${alarmId}/acknowledge`, {})
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().state, 'active_acknowledged')
      assert.equal(res.json().pendingCommands, undefined)
      assert.equal((await commands()).length, 0)
    })

    it('the OpenAPI document gives every forwarded action its 202 and the event post its 409', async (t) => {
      const { h } = await cloudSetup(t, dialect)
      const doc = (await h.inject(undefined, { url: '/openapi.json' })).json() as {
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
      }
      for (const action of ['acknowledge', 'shelve', 'unshelve', 'out-of-service', 'return-to-service']) {
        assert.ok(doc.paths[`/api/sites/{siteId}/alarms/{alarmId}/${action}`]!.post!.responses['202'], action)
      }
      assert.ok(doc.paths['/api/sites/{siteId}/alarms/acknowledge']!.post!.responses['202'])
      assert.ok(doc.paths['/api/sites/{siteId}/alarms/events']!.post!.responses['409'])
    })

    it("seeding a site server records its sites' pending commands again after the seed's cursor, and no settled or other site's one", async (t) => {
      const { h, org, admin, member, alarmId, link, commands } = await cloudSetup(t, dialect)
      await link('srv_1', ['S1'])
      assert.equal((await member('POST', `/api/sites/S1/alarms/${alarmId}/acknowledge`, {})).statusCode, 202)
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${alarmId}/out-of-service`, { comment: 'm' })).statusCode, 202)
      const [first, second] = await commands()
      await h.handle.db.updateTable('link_commands').set({ status: 'applied', result: '{}', settled_at: 1 }).where('id', '=', second!.id).execute()
      const orgId = org.id as OrgId
      // Everything so far readable first (PostgreSQL: another test's open transaction holds the horizon back).
      await outboxSettled(h.handle.db, dialect, orgId)
      const cursor = await currentCursor(h.handle.db, dialect, orgId)
      const touched = await h.handle.db.transaction().execute((trx) => republishPendingCommands(trx, orgId, ['S1', 'S2']))
      assert.equal(touched, 1)
      await outboxSettled(h.handle.db, dialect, orgId)
      const changes = await readChanges(h.handle.db, dialect, orgId, cursor, { tables: ['link_commands'], limit: 100 })
      assert.deepEqual(
        changes.map((c) => [c.op, c.key, c.row.status, c.origin]),
        [['upsert', [first!.id], 'pending', '']],
      )
    })

    it("reads of a linked site's alarms do not expire its shelves in the cloud: its site server does and sends the transition up", async (t) => {
      const { h, admin, read, alarmId, link } = await cloudSetup(t, dialect)
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${alarmId}/shelve`, { comment: 'nuisance', until: future(h, MIN) })).statusCode, 200)
      await link('srv_1', ['S1'])
      h.clock.advance(2 * MIN)
      assert.equal((await admin('GET', '/api/sites/S1/alarms')).statusCode, 200)
      const alarm = await read(alarmId)
      assert.equal(alarm.state, 'shelved')
      assert.deepEqual(
        alarm.history.map((x) => x.action),
        ['activated', 'shelved'],
      )
    })

    it("another organisation sees none of the commands; its own site with the victim's alarm id is a 404 like an unknown alarm", async (t) => {
      const { h, member, alarmId, link } = await cloudSetup(t, dialect)
      await link('srv_1', ['S1'])
      assert.equal((await member('POST', `/api/sites/S1/alarms/${alarmId}/acknowledge`, {})).statusCode, 202)
      const stranger = await h.orgWithKey('admin')
      const as = (url: string) => h.inject({ org: stranger.org, apiKey: stranger.key }, { method: 'GET', url })
      assert.equal((await as('/api/link/commands')).json().items.length, 0)
      const res = await as(`/api/sites/S1/alarms/${alarmId}/commands`)
      assert.equal(res.statusCode, 404)
      assert.equal(res.json().code, 'NotFound')
      // Below the stranger's own site S1, the victim's alarm id is as unknown as any other.
      const own = await h.inject({ org: stranger.org, apiKey: stranger.key }, { method: 'POST', url: '/api/sites', payload: { code: 'S1', name: 'Mine' } })
      assert.equal(own.statusCode, 201)
      const below = await as(`/api/sites/S1/alarms/${alarmId}/commands`)
      assert.equal(below.statusCode, 404)
      assert.equal(below.json().code, 'NotFound')
    })
  })
}
