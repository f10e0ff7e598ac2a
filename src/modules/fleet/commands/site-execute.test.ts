import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { testDialects, type TestDialect } from '../../../../test/harness.ts'
import type { LinkCommandsTable } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'
import { AlarmWriteQueueFull } from '../../alarms/errors.ts'
import { createAlarmsService } from '../../alarms/service.ts'
import { setup } from '../../alarms/test-helpers.ts'
import { createSitesService } from '../../sites/service.ts'
import { withApplyOrigin } from '../outbox/store.ts'
import { executePendingCommands, type ForwardedActionRunner } from './execute.ts'

const CLOUD_ACTOR = { kind: 'user', subject: 'oidc-sub-of-ana', role: 'admin', account: 'oid-ana' }

/** A site server (SQLite, site mode) with site S1 and the alarms service a link agent would use. */
async function siteSetup(t: TestContext, dialect: TestDialect) {
  const s = await setup(t, dialect)
  const { h, org } = s
  const orgId = org.id as OrgId
  const alarms = createAlarmsService({
    handle: h.handle,
    clock: h.clock,
    sites: createSitesService({ handle: h.handle, clock: h.clock, dependents: [] }),
    instances: { existingIds: async () => new Set<string>() },
  })
  let n = 0
  /** Inserts a pending command as the pull would: with the cloud as the change's origin. */
  const receive = async (alarmId: string, action: string, body: unknown, createdAt: number, actor: unknown = CLOUD_ACTOR) => {
    const row: LinkCommandsTable = {
      org_id: orgId,
      id: `cmd_${String(9 - n++).padStart(26, '0')}`, // ids sort against created_at: the order must come from created_at
      site_code: 'S1',
      alarm_id: alarmId,
      action,
      body: JSON.stringify(body),
      actor: JSON.stringify(actor),
      created_at: createdAt,
      status: 'pending',
      result: null,
      settled_at: null,
    }
    await h.handle.db.transaction().execute((trx) => withApplyOrigin(trx, dialect, 'cloud', () => trx.insertInto('link_commands').values(row).execute()))
    return row.id
  }
  const command = async (id: string) => {
    const row = await h.handle.db.selectFrom('link_commands').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirstOrThrow()
    return { ...row, result: row.result === null ? null : JSON.parse(row.result) }
  }
  const deps = { handle: h.handle, clock: h.clock, alarms }
  return { ...s, orgId, alarms, deps, receive, command }
}

// A site server runs on SQLite; the same code on PostgreSQL is checked too (the mode and the database are independent).
for (const dialect of testDialects()) {
  describe(`${dialect}: a site server applies the commands the cloud forwarded (issue 26)`, () => {
    it('applies them in created_at order under the normal rules as the cloud actor; an illegal one is refused with its reason; a second run applies nothing', async (t) => {
      const { h, orgId, deps, post, ev, t0, read, rows, receive, command } = await siteSetup(t, dialect)
      const a = (await post([ev('P1', 'HI_TEMP', 'active', t0)])).results[0]!.alarmId!
      const now = h.clock.now()
      // Received out of order: created_at says acknowledge, acknowledge again (now illegal), out of service, back.
      const returned = await receive(a, 'return-to-service', { comment: 'done' }, now + 3)
      const ack = await receive(a, 'acknowledge', { comment: 'seen in the cloud' }, now)
      const out = await receive(a, 'out-of-service', { comment: 'maintenance' }, now + 2)
      const again = await receive(a, 'acknowledge', {}, now + 1)

      assert.deepEqual(await executePendingCommands(deps, orgId), { applied: 3, refused: 1 })

      const alarm = await read(a)
      assert.deepEqual(
        alarm.history.map((x) => [x.action, x.toState, x.actorKind, x.actorId, x.comment]),
        [
          ['activated', 'active_unacknowledged', 'apiKey', alarm.history[0]!.actorId, null],
          ['acknowledged', 'active_acknowledged', 'user', 'oidc-sub-of-ana', 'seen in the cloud'],
          ['removed_from_service', 'out_of_service', 'user', 'oidc-sub-of-ana', 'maintenance'],
          ['returned_to_service', 'active_acknowledged', 'user', 'oidc-sub-of-ana', 'done'],
        ],
      )
      const settled = await Promise.all([ack, again, out, returned].map(command))
      assert.deepEqual(
        settled.map((c) => [c.status, c.settled_at !== null]),
        [
          ['applied', true],
          ['refused', true],
          ['applied', true],
          ['applied', true],
        ],
      )
      assert.equal(settled[0]!.result.alarm.state, 'active_acknowledged')
      assert.equal(settled[3]!.result.alarm.state, 'active_acknowledged')
      assert.equal(settled[1]!.result.code, 'AlarmStateConflict')
      assert.match(settled[1]!.result.detail, /does not allow/)

      // The settlements travel up: each is an update made here (origin '').
      const outbox = await h.handle.db
        .selectFrom('link_outbox')
        .select(['origin'])
        .where('org_id', '=', orgId)
        .where('table_name', '=', 'link_commands')
        .orderBy('seq')
        .execute()
      assert.deepEqual(
        outbox.map((o) => o.origin),
        ['cloud', 'cloud', 'cloud', 'cloud', '', '', '', ''],
      )

      const history = await rows('alarm_history')
      assert.deepEqual(await executePendingCommands(deps, orgId), { applied: 0, refused: 0 })
      assert.equal(await rows('alarm_history'), history)
      assert.deepEqual((await command(ack)).result, settled[0]!.result)
    })

    it('a body or action its route would refuse, an unknown alarm and a malformed actor are refused with the code, and change nothing', async (t) => {
      const { h, orgId, deps, post, ev, t0, read, receive, command } = await siteSetup(t, dialect)
      const a = (await post([ev('P1', 'HI_TEMP', 'active', t0)])).results[0]!.alarmId!
      const now = h.clock.now()
      const ids = [
        await receive(a, 'shelve', { comment: 'no end' }, now),
        await receive(a, 'shelve', { comment: 'ended already', until: new Date(now - 60_000).toISOString() }, now + 1),
        await receive(a, 'delete', { comment: 'x' }, now + 2),
        await receive('alm_NOPE', 'acknowledge', {}, now + 3),
        await receive(a, 'acknowledge', {}, now + 4, { kind: 'user' }),
        // A kind the history may not hold: applied, the link would then refuse to carry the history row back.
        await receive(a, 'acknowledge', {}, now + 5, { kind: 'root', subject: 'x', role: 'owner' }),
      ]
      assert.deepEqual(await executePendingCommands(deps, orgId), { applied: 0, refused: 6 })
      const results = await Promise.all(ids.map(command))
      assert.deepEqual(
        results.map((c) => [c.status, c.result.code]),
        [
          ['refused', 'ValidationFailed'],
          ['refused', 'ValidationFailed'],
          ['refused', 'ValidationFailed'],
          ['refused', 'NotFound'],
          ['refused', 'ValidationFailed'],
          ['refused', 'ValidationFailed'],
        ],
      )
      assert.match(results[1]!.result.detail, /until/)
      assert.match(results[5]!.result.detail, /kind \(apiKey, user, sitePin, link, cli\)/)
      assert.equal((await read(a)).history.length, 1)
    })

    it('a shelve forwarded from the cloud is applied with its end', async (t) => {
      const { h, orgId, deps, post, ev, t0, read, receive, command } = await siteSetup(t, dialect)
      const a = (await post([ev('P1', 'HI_TEMP', 'active', t0)])).results[0]!.alarmId!
      const until = new Date(h.clock.now() + 3_600_000).toISOString()
      const id = await receive(a, 'shelve', { comment: 'nuisance', until }, h.clock.now())
      assert.deepEqual(await executePendingCommands(deps, orgId), { applied: 1, refused: 0 })
      assert.equal((await read(a)).shelvedUntil, until)
      assert.equal((await command(id)).result.alarm.state, 'shelved')
    })

    it('the action and its settlement commit together: a command settled by another run meanwhile is not applied again', async (t) => {
      const { h, orgId, alarms, post, ev, t0, read, receive, command } = await siteSetup(t, dialect)
      const a = (await post([ev('P1', 'HI_TEMP', 'active', t0)])).results[0]!.alarmId!
      const id = await receive(a, 'acknowledge', {}, h.clock.now())
      // Another run settles the command between this run's read of the pending ones and its transaction.
      const racing: ForwardedActionRunner = {
        async applyForwarded(...args) {
          await h.handle.db.updateTable('link_commands').set({ status: 'applied', result: '{}', settled_at: 1 }).where('id', '=', id).execute()
          return alarms.applyForwarded(...args)
        },
      }
      assert.deepEqual(await executePendingCommands({ handle: h.handle, clock: h.clock, alarms: racing }, orgId), { applied: 0, refused: 0 })
      const alarm = await read(a)
      assert.equal(alarm.state, 'active_unacknowledged')
      assert.equal(alarm.history.length, 1)
      assert.equal((await command(id)).settled_at, 1)
    })

    it('a busy alarm writer (503) stops the run with that command and the later ones still pending, and the next run applies them in order', async (t) => {
      const { h, orgId, deps, alarms, post, ev, t0, read, receive, command } = await siteSetup(t, dialect)
      const a = (await post([ev('P1', 'HI_TEMP', 'active', t0)])).results[0]!.alarmId!
      const first = await receive(a, 'acknowledge', {}, h.clock.now())
      const second = await receive(a, 'out-of-service', { comment: 'm' }, h.clock.now() + 1)
      const busy: ForwardedActionRunner = {
        async applyForwarded() {
          throw new AlarmWriteQueueFull(1)
        },
      }
      await assert.rejects(executePendingCommands({ ...deps, alarms: busy }, orgId), (err: Error) => err instanceof AlarmWriteQueueFull)
      assert.deepEqual([(await command(first)).status, (await command(second)).status], ['pending', 'pending'])
      assert.deepEqual(await executePendingCommands({ ...deps, alarms }, orgId), { applied: 2, refused: 0 })
      assert.equal((await read(a)).state, 'out_of_service')
    })
  })
}
