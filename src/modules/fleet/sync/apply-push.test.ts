import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { harness, testDialects, type TestDialect } from '../../../../test/harness.ts'
import type { Actor } from '../../../identity.ts'
import { connectDatabase } from '../../../db/connect.ts'
import { withOrgScope } from '../../../db/tenant-scope.ts'
import { LinkChangeRefused, LinkDiverged } from '../errors.ts'
import { applyPush, type PushRequest } from './apply-push.ts'
import { createConflictsService } from './conflicts.ts'
import { START } from '../outbox/store.ts'
import type { Change, Cursor } from './outbox-port.ts'
import { alarmEventRow, auditRow, change, commandRow, controllerRow, countRows, localDelete, localUpsert, siteRow } from './test-support.ts'

const SERVER = 'srv_pit'
const ADMIN: Actor = { kind: 'user', subject: 'usr_admin', role: 'admin' }

/** A cloud cell with one organisation of two sites (S1, S2); the site server `srv_pit` serves S1 only. */
async function cloud(t: TestContext, dialect: TestDialect) {
  const h = await harness(t, dialect)
  const org = await h.createOrg()
  const owner = h.handle.db
  for (const code of ['S1', 'S2'])
    await owner
      .insertInto('sites')
      .values(siteRow(org.id, code) as never)
      .execute()
  const deps = { handle: h.appHandle, clock: h.clock }
  const push = (changes: Change[], o: { after?: Cursor; epoch?: string; sites?: string[] } = {}) => {
    const req: PushRequest = { orgId: org.id, serverId: SERVER, sites: o.sites ?? ['S1'], epoch: o.epoch ?? 'ep1', after: o.after ?? START, changes }
    return withOrgScope(org.id, () => applyPush(deps, req))
  }
  const conflicts = createConflictsService(deps)
  const inOrg = <T>(fn: () => Promise<T>) => withOrgScope(org.id, fn)
  const count = (table: string) => countRows(owner, table, org.id)
  const controller = (id: string) =>
    owner.selectFrom('controllers').selectAll().where('org_id', '=', org.id).where('site_code', '=', 'S1').where('id', '=', id).executeTakeFirst()
  return { h, org, owner, push, conflicts, inOrg, count, controller }
}

const isRefused = (index: number, rule: RegExp, column?: string) => (e: unknown) => {
  assert.ok(e instanceof LinkChangeRefused, String(e))
  assert.equal(e.extensions?.index, index)
  assert.match(String(e.extensions?.rule), rule)
  if (column !== undefined) assert.equal(e.extensions?.column, column)
  return true
}

function without(row: Record<string, unknown>, column: string): Record<string, unknown> {
  const copy = { ...row }
  delete copy[column]
  return copy
}

for (const dialect of testDialects()) {
  describe(`fleet sync, the cloud applies a push (${dialect})`, () => {
    it('a resent batch applies once: the second push skips every change', async (t) => {
      const c = await cloud(t, dialect)
      const batch = [1, 2, 3].map((n) => change(n, 'alarm_events', alarmEventRow(c.org.id, 'S1', `ev${n}`)))
      assert.deepEqual(await c.push(batch), { mark: { epoch: 'ep1', tx: 0, seq: 3 }, applied: 3, skipped: 0, conflicts: 0 })
      assert.deepEqual(await c.push(batch), { mark: { epoch: 'ep1', tx: 0, seq: 3 }, applied: 0, skipped: 3, conflicts: 0 })
      assert.equal(await c.count('alarm_events'), 3)
      const stored = await c.owner.selectFrom('alarm_events').selectAll().where('org_id', '=', c.org.id).where('event_id', '=', 'ev2').executeTakeFirstOrThrow()
      assert.deepEqual(stored, alarmEventRow(c.org.id, 'S1', 'ev2'))
      // Resent with the right `after`, there is nothing new either.
      assert.deepEqual(await c.push([], { after: { tx: 0, seq: 3 } }), { mark: { epoch: 'ep1', tx: 0, seq: 3 }, applied: 0, skipped: 0, conflicts: 0 })
    })

    it('the same batch pushed twice at once applies once', async (t) => {
      const c = await cloud(t, dialect)
      const batch = [1, 2, 3].map((n) => change(n, 'alarm_events', alarmEventRow(c.org.id, 'S1', `ev${n}`)))
      const answers = await Promise.all([c.push(batch), c.push(batch)])
      assert.deepEqual(answers.map((a) => [a.applied, a.skipped]).sort(), [
        [0, 3],
        [3, 0],
      ])
      // And again once the mark exists (the second contact locks the mark row, not the first-contact insert).
      const more = [4, 5].map((n) => change(n, 'alarm_events', alarmEventRow(c.org.id, 'S1', `ev${n}`)))
      const again = await Promise.all([c.push(more, { after: { tx: 0, seq: 3 } }), c.push(more, { after: { tx: 0, seq: 3 } })])
      assert.deepEqual(again.map((a) => [a.applied, a.skipped]).sort(), [
        [0, 2],
        [2, 0],
      ])
      assert.equal(await c.count('alarm_events'), 5)
    })

    it('a full batch (1000 changes) applies in one push', async (t) => {
      const c = await cloud(t, dialect)
      const batch = Array.from({ length: 1000 }, (_, i) => change(i + 1, 'alarm_events', alarmEventRow(c.org.id, 'S1', `ev${i}`, { value: i })))
      assert.deepEqual(await c.push(batch), { mark: { epoch: 'ep1', tx: 0, seq: 1000 }, applied: 1000, skipped: 0, conflicts: 0 })
      assert.equal(await c.count('alarm_events'), 1000)
    })

    it('a batch cut in the middle resumes after the mark: the resend applies only what the cloud lacks', async (t) => {
      const c = await cloud(t, dialect)
      const all = [1, 2, 3, 4, 5].map((n) => change(n * 10, 'alarm_events', alarmEventRow(c.org.id, 'S1', `ev${n}`, { value: n })))
      // The cloud applied the first two; the site never heard (the answer was cut) and sends the batch again from 0.
      assert.equal((await c.push(all.slice(0, 2))).mark.seq, 20)
      assert.deepEqual(await c.push(all), { mark: { epoch: 'ep1', tx: 0, seq: 50 }, applied: 3, skipped: 2, conflicts: 0 })
      assert.equal(await c.count('alarm_events'), 5)
      // A later image of a row within one batch wins, as it would one change at a time; a tombstone deletes.
      const later = [
        change(60, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'ev1', { value: 100 })),
        change(61, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'ev1', { value: 101 })),
        change(62, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'ev2'), { op: 'delete' }),
      ]
      assert.equal((await c.push(later, { after: { tx: 0, seq: 50 } })).applied, 3)
      const ev1 = await c.owner
        .selectFrom('alarm_events')
        .select('value')
        .where('org_id', '=', c.org.id)
        .where('event_id', '=', 'ev1')
        .executeTakeFirstOrThrow()
      assert.equal(ev1.value, 101)
      assert.equal(await c.count('alarm_events'), 4)
    })

    it('pages of a PostgreSQL site server go by (tx, seq): a later transaction’s lower seq applies; a replayed or reordered page applies nothing twice', async (t) => {
      const c = await cloud(t, dialect)
      const at = (tx: number, seq: number, id: string) => change(seq, 'alarm_events', alarmEventRow(c.org.id, 'S1', id), { tx })
      const first = [at(10, 7, 'ev1'), at(10, 8, 'ev2')]
      // Transaction 11 took seq 6 before transaction 10 took 7 and 8, and committed after them.
      const second = [at(11, 6, 'ev3'), at(12, 9, 'ev4')]
      assert.deepEqual(await c.push(first), { mark: { epoch: 'ep1', tx: 10, seq: 8 }, applied: 2, skipped: 0, conflicts: 0 })
      assert.deepEqual(await c.push(second, { after: { tx: 10, seq: 8 } }), { mark: { epoch: 'ep1', tx: 12, seq: 9 }, applied: 2, skipped: 0, conflicts: 0 })
      // Replayed: both pages from the start (an answer lost), the second page again.
      assert.deepEqual(await c.push([...first, ...second]), { mark: { epoch: 'ep1', tx: 12, seq: 9 }, applied: 0, skipped: 4, conflicts: 0 })
      assert.deepEqual(await c.push(second, { after: { tx: 10, seq: 8 } }), { mark: { epoch: 'ep1', tx: 12, seq: 9 }, applied: 0, skipped: 2, conflicts: 0 })
      // Reordered: a page out of (tx, seq) order is refused whole, even when its seqs increase.
      await assert.rejects(c.push([at(14, 11, 'ev6'), at(13, 12, 'ev5')], { after: { tx: 12, seq: 9 } }), isRefused(1, /does not follow/))
      // A page that starts after a position the cloud never applied: the same seq in another transaction.
      await assert.rejects(
        c.push([at(13, 12, 'ev5')], { after: { tx: 11, seq: 9 } }),
        (e: unknown) => e instanceof LinkDiverged && e.extensions?.reason === 'behind',
      )
      assert.equal(await c.count('alarm_events'), 4)
      const applied = await c.owner
        .selectFrom('link_outbox')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('org_id', '=', c.org.id)
        .where('table_name', '=', 'alarm_events')
        .executeTakeFirstOrThrow()
      assert.equal(Number(applied.n), 4, 'each change applied once')
    })

    it('a site edit of a row the cloud changed after its base loses: a conflict with both versions, the cloud row unchanged', async (t) => {
      const c = await cloud(t, dialect)
      const base = await localUpsert(c.owner, 'controllers', controllerRow(c.org.id, 'S1', 'plc1'))
      const cloudVersion = controllerRow(c.org.id, 'S1', 'plc1', { ip_address: '10.0.0.2', updated_at: 2 })
      await localUpsert(c.owner, 'controllers', cloudVersion)
      const siteVersion = controllerRow(c.org.id, 'S1', 'plc1', { ip_address: '10.9.9.9', updated_at: 3 })
      const answer = await c.push([change(1, 'controllers', siteVersion, { base })])
      assert.deepEqual(answer, { mark: { epoch: 'ep1', tx: 0, seq: 1 }, applied: 0, skipped: 0, conflicts: 1 })
      assert.deepEqual(await c.controller('plc1'), cloudVersion)
      const list = await c.inOrg(() => c.conflicts.list(c.org.id, {}))
      assert.equal(list.items.length, 1)
      const [conflict] = list.items
      assert.equal(conflict!.serverId, SERVER)
      assert.equal(conflict!.table, 'controllers')
      assert.deepEqual(conflict!.key, ['S1', 'plc1'])
      assert.equal(conflict!.losingOp, 'upsert')
      assert.deepEqual(conflict!.losingRow, siteVersion)
      assert.equal(conflict!.winningOp, 'upsert')
      assert.deepEqual(conflict!.winningRow, cloudVersion)
      assert.equal(conflict!.resolution, null)
    })

    if (dialect === 'postgres') {
      it('a cloud edit committing while the push checks the row is seen: the site edit loses, the cloud keeps its edit', async (t) => {
        const c = await cloud(t, dialect)
        const base = await localUpsert(c.owner, 'controllers', controllerRow(c.org.id, 'S1', 'plc1'))
        const siteVersion = controllerRow(c.org.id, 'S1', 'plc1', { ip_address: '10.9.9.9' })
        let pushed: ReturnType<typeof c.push> | undefined
        await c.owner.transaction().execute(async (trx) => {
          await trx.updateTable('controllers').set({ name: 'edited meanwhile' }).where('org_id', '=', c.org.id).where('id', '=', 'plc1').execute()
          pushed = c.push([change(1, 'controllers', siteVersion, { base })])
          // Commit only once the push waits for the row (it then reads the row after this edit commits).
          for (let i = 0; i < 400; i++) {
            const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`.execute(c.owner)
            if (rows[0]!.n > 0) break
            await new Promise((resolve) => setTimeout(resolve, 25))
          }
        })
        assert.equal((await pushed!).conflicts, 1)
        assert.equal((await c.controller('plc1'))!.name, 'edited meanwhile')
        assert.equal((await c.controller('plc1'))!.ip_address, '10.0.0.1')
      })
    }

    it("a site edit of the cloud's latest version is applied", async (t) => {
      const c = await cloud(t, dialect)
      const base = await localUpsert(c.owner, 'controllers', controllerRow(c.org.id, 'S1', 'plc1'))
      const siteVersion = controllerRow(c.org.id, 'S1', 'plc1', { ip_address: '10.9.9.9', updated_at: 3 })
      // A change the cloud applied earlier from this same site server is no cloud edit: it does not make a conflict.
      assert.deepEqual(await c.push([change(1, 'controllers', siteVersion, { base })]), {
        mark: { epoch: 'ep1', tx: 0, seq: 1 },
        applied: 1,
        skipped: 0,
        conflicts: 0,
      })
      assert.deepEqual(await c.controller('plc1'), siteVersion)
      assert.equal((await c.inOrg(() => c.conflicts.list(c.org.id, {}))).items.length, 0)
    })

    it('a delete against an edit is a conflict, either way round', async (t) => {
      const c = await cloud(t, dialect)
      // The site deletes a row the cloud edited since.
      const base1 = await localUpsert(c.owner, 'controllers', controllerRow(c.org.id, 'S1', 'plc1'))
      const edited = controllerRow(c.org.id, 'S1', 'plc1', { name: 'renamed in the cloud' })
      await localUpsert(c.owner, 'controllers', edited)
      // The site edits a row the cloud deleted since.
      const base2 = await localUpsert(c.owner, 'controllers', controllerRow(c.org.id, 'S1', 'plc2'))
      await localDelete(c.owner, 'controllers', controllerRow(c.org.id, 'S1', 'plc2'))
      const answer = await c.push([
        change(1, 'controllers', controllerRow(c.org.id, 'S1', 'plc1'), { op: 'delete', base: base1 }),
        change(2, 'controllers', controllerRow(c.org.id, 'S1', 'plc2', { name: 'renamed on site' }), { base: base2 }),
      ])
      assert.equal(answer.conflicts, 2)
      assert.deepEqual(await c.controller('plc1'), edited)
      assert.equal(await c.controller('plc2'), undefined)
      const items = (await c.inOrg(() => c.conflicts.list(c.org.id, {}))).items
      const byKey = new Map(items.map((i) => [i.key[1], i]))
      assert.equal(byKey.get('plc1')!.losingOp, 'delete')
      assert.equal(byKey.get('plc1')!.winningOp, 'upsert')
      assert.equal(byKey.get('plc2')!.losingOp, 'upsert')
      assert.equal(byKey.get('plc2')!.winningOp, 'delete')
      assert.equal(byKey.get('plc2')!.winningRow, null)
    })

    it('a row the site created (base null) is accepted, and so is its next edit before its base came back', async (t) => {
      const c = await cloud(t, dialect)
      const created = controllerRow(c.org.id, 'S1', 'plc9')
      assert.equal((await c.push([change(1, 'controllers', created)])).applied, 1)
      assert.deepEqual(await c.controller('plc9'), created)
      // Without the outbox's triggers the test records what they would: the cloud's change, from this site server.
      if ((await c.count('link_outbox')) === 0) {
        await c.owner
          .insertInto('link_outbox')
          .values({
            org_id: c.org.id,
            table_name: 'controllers',
            site_code: 'S1',
            row_key: '["S1","plc9"]',
            op: 'upsert',
            row: JSON.stringify(created),
            base: null,
            origin: SERVER,
            at: 1,
          } as never)
          .execute()
      }
      const again = controllerRow(c.org.id, 'S1', 'plc9', { name: 'second edit' })
      assert.equal((await c.push([change(2, 'controllers', again)], { after: { tx: 0, seq: 1 } })).applied, 1)
      assert.deepEqual(await c.controller('plc9'), again)
      // A row the cloud made itself under that key, with other content: the site's created row loses.
      const cloudOwn = controllerRow(c.org.id, 'S1', 'plc7', { name: 'made in the cloud' })
      await localUpsert(c.owner, 'controllers', cloudOwn)
      const answer = await c.push([change(3, 'controllers', controllerRow(c.org.id, 'S1', 'plc7', { name: 'made on site' }))], { after: { tx: 0, seq: 2 } })
      assert.equal(answer.conflicts, 1)
      assert.deepEqual(await c.controller('plc7'), cloudOwn)
    })

    it('a site server deleting its site record loses: the site and everything of it stay in the cloud', async (t) => {
      const c = await cloud(t, dialect)
      const base = await localUpsert(c.owner, 'sites', siteRow(c.org.id, 'S1', { name: 'Pit' }))
      await c.owner
        .insertInto('controllers')
        .values(controllerRow(c.org.id, 'S1', 'plc1') as never)
        .execute()
      const answer = await c.push([change(1, 'sites', siteRow(c.org.id, 'S1', { name: 'Pit' }), { op: 'delete', base })])
      assert.equal(answer.conflicts, 1)
      assert.equal(await c.count('sites'), 2)
      assert.equal(await c.count('controllers'), 1)
    })

    it('a unique-key clash is a conflict, and the rest of the batch still applies', async (t) => {
      const c = await cloud(t, dialect)
      await localUpsert(c.owner, 'controllers', controllerRow(c.org.id, 'S1', 'plc1', { asset_number: 'A-100' }))
      const clashing = controllerRow(c.org.id, 'S1', 'plc2', { asset_number: 'A-100' })
      const answer = await c.push([
        change(1, 'controllers', clashing),
        change(2, 'controllers', controllerRow(c.org.id, 'S1', 'plc3')),
        change(3, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'ev1')),
      ])
      assert.deepEqual(answer, { mark: { epoch: 'ep1', tx: 0, seq: 3 }, applied: 2, skipped: 0, conflicts: 1 })
      assert.equal(await c.controller('plc2'), undefined)
      assert.ok(await c.controller('plc3'))
      assert.equal(await c.count('alarm_events'), 1)
      const [conflict] = (await c.inOrg(() => c.conflicts.list(c.org.id, {}))).items
      assert.deepEqual(conflict!.losingRow, clashing)
      assert.equal(conflict!.winningOp, null)
    })

    it("a site keeps to its own rows: a key without the site reaches no other site's row; the audit trail is append-only", async (t) => {
      const c = await cloud(t, dialect)
      const theirs = commandRow(c.org.id, 'S2', 'cmd_shared')
      const cloudAudit = auditRow(c.org.id, 'aud_cloud', 'member.invited')
      await c.owner
        .insertInto('link_commands')
        .values(theirs as never)
        .execute()
      await c.owner
        .insertInto('audit_events')
        .values(cloudAudit as never)
        .execute()
      const answer = await c.push([
        change(1, 'link_commands', commandRow(c.org.id, 'S1', 'cmd_shared', { status: 'applied' })),
        change(2, 'link_commands', commandRow(c.org.id, 'S1', 'cmd_shared'), { op: 'delete' }),
        change(3, 'audit_events', auditRow(c.org.id, 'aud_cloud', 'forged')),
        change(4, 'audit_events', auditRow(c.org.id, 'aud_cloud', 'forged'), { op: 'delete' }),
        change(5, 'audit_events', auditRow(c.org.id, 'aud_site', 'controller.updated')),
        change(6, 'link_commands', commandRow(c.org.id, 'S1', 'cmd_mine')),
        change(7, 'link_commands', commandRow(c.org.id, 'S1', 'cmd_mine', { status: 'applied', result: '{}', settled_at: 9 })),
      ])
      assert.equal(answer.applied, 7)
      const commands = await c.owner.selectFrom('link_commands').selectAll().where('org_id', '=', c.org.id).orderBy('id').execute()
      assert.deepEqual(commands, [commandRow(c.org.id, 'S1', 'cmd_mine', { status: 'applied', result: '{}', settled_at: 9 }), theirs])
      const audit = await c.owner
        .selectFrom('audit_events')
        .selectAll()
        .where('org_id', '=', c.org.id)
        .where('id', 'in', ['aud_cloud', 'aud_site'])
        .orderBy('id')
        .execute()
      assert.deepEqual(audit, [cloudAudit, auditRow(c.org.id, 'aud_site', 'controller.updated')])
    })

    it('a bad change refuses the whole batch with 422 naming it, and nothing changes', async (t) => {
      const c = await cloud(t, dialect)
      const good = change(1, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'ok'))
      const other = await c.h.createOrg()
      const cases: Array<[string, Change, (e: unknown) => boolean]> = [
        ["another site's change", change(2, 'alarm_events', alarmEventRow(c.org.id, 'S2', 'x')), isRefused(1, /not one of this link's sites/)],
        [
          "a row whose site column is another site's",
          { ...change(2, 'alarm_events', alarmEventRow(c.org.id, 'S2', 'x')), site: 'S1' },
          isRefused(1, /site differs/, 'site_code'),
        ],
        ['a foreign org_id', change(2, 'alarm_events', alarmEventRow(other.id, 'S1', 'x')), isRefused(1, /another organisation/, 'org_id')],
        ['an unknown table', { ...change(2, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'x')), table: 'api_keys' }, isRefused(1, /not linked/)],
        [
          'a column that does not exist',
          change(2, 'alarm_events', { ...alarmEventRow(c.org.id, 'S1', 'x'), colour: 'red' }),
          isRefused(1, /no such column/, 'colour'),
        ],
        ['a missing column', change(2, 'alarm_events', without(alarmEventRow(c.org.id, 'S1', 'x'), 'message')), isRefused(1, /lacks/, 'message')],
        [
          'a value of the wrong type',
          change(2, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'x', { occurred_at: 'yesterday' })),
          isRefused(1, /type rule/, 'occurred_at'),
        ],
        [
          'null in a NOT NULL column',
          change(2, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'x', { condition: null })),
          isRefused(1, /not null/, 'condition'),
        ],
        [
          "a key that is not the row's",
          { ...change(2, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'x')), key: ['S1', 'y'] },
          isRefused(1, /key differs/, 'event_id'),
        ],
        [
          'a conflict record from a site',
          { ...change(2, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'x')), table: 'link_conflicts' },
          isRefused(1, /does not send/),
        ],
        ['changes out of order', change(1, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'x')), isRefused(1, /does not follow/)],
      ]
      for (const [what, bad, check] of cases) {
        await assert.rejects(c.push([good, bad]), check, what)
      }
      assert.equal(await c.count('alarm_events'), 0)
      assert.equal(await c.count('link_marks'), 0)
      assert.equal(await c.count('link_conflicts'), 0)
    })

    it('a site restored from an old backup is refused with LinkDiverged, and nothing changes', async (t) => {
      const c = await cloud(t, dialect)
      const batch = [1, 2, 3].map((n) => change(n, 'alarm_events', alarmEventRow(c.org.id, 'S1', `ev${n}`)))
      await c.push(batch)
      const diverged = (reason: string) => (e: unknown) => e instanceof LinkDiverged && e.extensions?.reason === reason
      // The restored site made other changes under the same seqs: the change at the mark differs.
      const restored = [2, 3, 4].map((n) => change(n, 'alarm_events', alarmEventRow(c.org.id, 'S1', `other${n}`)))
      await assert.rejects(c.push(restored, { after: { tx: 0, seq: 1 } }), diverged('digest'))
      // It resumes before the mark without the change at the mark.
      await assert.rejects(c.push([change(4, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'ev4'))], { after: { tx: 0, seq: 1 } }), diverged('behind'))
      // It believes the cloud holds more than it does.
      await assert.rejects(c.push([change(9, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'ev9'))], { after: { tx: 0, seq: 8 } }), diverged('ahead'))
      assert.equal(await c.count('alarm_events'), 3)
      const mark = await c.owner.selectFrom('link_marks').selectAll().where('org_id', '=', c.org.id).executeTakeFirstOrThrow()
      assert.equal(Number(mark.seq), 3)
      // An epoch other than the enrolled one is refused too; a new enrolment's epoch starts a new mark.
      await c.owner
        .insertInto('site_servers')
        .values({ org_id: c.org.id, id: SERVER, name: 'pit', sites: '["S1"]', epoch: 'ep2', created_at: 1, created_by: 'test' } as never)
        .execute()
      await assert.rejects(c.push([change(4, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'ev4'))], { after: { tx: 0, seq: 3 } }), diverged('epoch'))
      assert.deepEqual(await c.push([change(1, 'alarm_events', alarmEventRow(c.org.id, 'S1', 'new1'))], { epoch: 'ep2' }), {
        mark: { epoch: 'ep2', tx: 0, seq: 1 },
        applied: 1,
        skipped: 0,
        conflicts: 0,
      })
      assert.equal(await c.count('alarm_events'), 4)
    })

    it('conflicts: listed newest first by page, filtered, re-applied as a cloud change, dismissed', async (t) => {
      const c = await cloud(t, dialect)
      const changes: Change[] = []
      for (const n of [1, 2, 3]) {
        const base = await localUpsert(c.owner, 'controllers', controllerRow(c.org.id, 'S1', `plc${n}`))
        await localUpsert(c.owner, 'controllers', controllerRow(c.org.id, 'S1', `plc${n}`, { name: 'cloud' }))
        changes.push(change(n, 'controllers', controllerRow(c.org.id, 'S1', `plc${n}`, { name: `site ${n}` }), { base }))
      }
      for (const [i, ch] of changes.entries()) {
        c.h.clock.advance(1000)
        await c.push([ch], { after: { tx: 0, seq: i } })
      }
      const page1 = await c.inOrg(() => c.conflicts.list(c.org.id, { limit: 2 }))
      assert.deepEqual(
        page1.items.map((i) => i.key[1]),
        ['plc3', 'plc2'],
      )
      assert.ok(page1.nextCursor)
      const page2 = await c.inOrg(() => c.conflicts.list(c.org.id, { limit: 2, cursor: page1.nextCursor! }))
      assert.deepEqual(
        page2.items.map((i) => i.key[1]),
        ['plc1'],
      )
      assert.equal(page2.nextCursor, null)

      const id3 = page1.items[0]!.id
      // A server that has not looked at the table yet (a fresh handle: nothing introspected) re-applies as well.
      const fresh = await connectDatabase(c.h.config.databaseAppUrl ?? c.h.config.databaseUrl, { poolSize: 1 })
      t.after(() => fresh.close())
      const reapplied = await c.inOrg(() => createConflictsService({ handle: fresh, clock: c.h.clock }).reapply(c.org.id, id3, ADMIN))
      assert.equal(reapplied.resolution, 'reapplied')
      assert.equal(reapplied.resolvedBy, 'user:usr_admin')
      assert.equal((await c.controller('plc3'))!.name, 'site 3')
      const id2 = page1.items[1]!.id
      assert.equal((await c.inOrg(() => c.conflicts.dismiss(c.org.id, id2, ADMIN))).resolution, 'dismissed')
      assert.equal((await c.controller('plc2'))!.name, 'cloud')
      await assert.rejects(
        c.inOrg(() => c.conflicts.reapply(c.org.id, id2, ADMIN)),
        (e: unknown) => (e as { code?: string }).code === 'Conflict',
      )
      const open = await c.inOrg(() => c.conflicts.list(c.org.id, { unresolved: true }))
      assert.deepEqual(
        open.items.map((i) => i.key[1]),
        ['plc1'],
      )
      assert.equal((await c.inOrg(() => c.conflicts.get(c.org.id, id3))).resolution, 'reapplied')
      await assert.rejects(
        c.inOrg(() => c.conflicts.get(c.org.id, 'lcf_missing')),
        (e: unknown) => (e as { code?: string }).code === 'NotFound',
      )
      // Another organisation sees none of them.
      const other = await c.h.createOrg()
      await assert.rejects(
        withOrgScope(other.id, () => c.conflicts.get(other.id, id3)),
        (e: unknown) => (e as { code?: string }).code === 'NotFound',
      )
    })
  })
}
