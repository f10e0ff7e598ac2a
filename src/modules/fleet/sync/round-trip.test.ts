import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { harness, testDialects, type TestDialect } from '../../../../test/harness.ts'
import { gate, outboxSettled, ownPostgresDatabase } from '../../../../test/support/fleet-link.ts'
import { LINKED_TABLES } from '../../../db/link-triggers.ts'
import { withOrgScope } from '../../../db/tenant-scope.ts'
import { currentCursor, readChanges, START, withApplyOrigin, type Cursor } from '../outbox/store.ts'
import { applyPull } from './apply-pull.ts'
import { applyPush } from './apply-push.ts'
import { insertBases, siteRowKeys } from '../enrolment/store.ts'
import type { OrgId } from '../../../ids.ts'
import { alarmEventRow, controllerRow, instanceRow, siteRow } from './test-support.ts'

const SERVER = 'srv_pit'
const DOWN = LINKED_TABLES.filter((t) => t.direction !== 'up').map((t) => t.name)
const UP = LINKED_TABLES.filter((t) => t.name !== 'link_conflicts').map((t) => t.name)

/**
 * Real outbox changes, moved by hand the way the agent moves them: a cloud cell (either database) and a site server
 * (SQLite unless said) of the same organisation; `pull` reads the cloud's outbox (not what came from this site server) and
 * applies it on the site, `push` reads the site's (not what came from the cloud) and applies it in the cloud.
 */
async function linked(t: TestContext, dialect: TestDialect, siteDialect: TestDialect = 'sqlite') {
  const cloud = await harness(t, dialect)
  // On PostgreSQL a site server has a database of its own.
  const site = await harness(t, siteDialect, siteDialect === 'postgres' ? await ownPostgresDatabase() : {})
  const org = await cloud.createOrg()
  const orgRow = await cloud.handle.db.selectFrom('orgs').selectAll().where('id', '=', org.id).executeTakeFirstOrThrow()
  await site.handle.db.insertInto('orgs').values(orgRow).execute()
  let pulled: Cursor = START
  let acked: Cursor = START
  const inOrg = <T>(fn: () => Promise<T>) => withOrgScope(org.id, fn)
  const settled = () => outboxSettled(cloud.handle.db, dialect, org.id)
  const pull = async () => {
    await settled()
    const changes = await inOrg(() =>
      readChanges(cloud.appHandle.db, dialect, org.id, pulled, { limit: 1000, tables: DOWN, sites: ['S1'], origin: { not: SERVER } }),
    )
    const result = await applyPull({ handle: site.handle, clock: site.clock }, { orgId: org.id, serverId: SERVER, sites: ['S1'], epoch: 'ep1', changes })
    pulled = result.mark
    return { changes, result }
  }
  const push = async () => {
    await outboxSettled(site.handle.db, siteDialect, org.id)
    const changes = await readChanges(site.handle.db, siteDialect, org.id, acked, { limit: 1000, tables: UP, origin: { not: 'cloud' } })
    const result = await inOrg(() =>
      applyPush({ handle: cloud.appHandle, clock: cloud.clock }, { orgId: org.id, serverId: SERVER, sites: ['S1'], epoch: 'ep1', after: acked, changes }),
    )
    acked = { tx: result.mark.tx, seq: result.mark.seq }
    return { changes, result }
  }
  const rows = async (side: 'cloud' | 'site', table: string, order: string) => {
    const db = side === 'cloud' ? cloud.handle.db : site.handle.db
    // The site server's share of the organisation: its site.
    const column = table === 'sites' ? 'code' : 'site_code'
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)} where org_id = ${org.id} and ${sql.ref(column)} = 'S1'
      order by ${sql.raw(order)}`.execute(db)
    return rows
  }
  const same = async (table: string, order: string) => {
    const c = await rows('cloud', table, order)
    assert.deepEqual(await rows('site', table, order), c, table)
    return c.length
  }
  const startAt = (cursor: Cursor) => {
    pulled = cursor
  }
  return { cloud, site, org, pull, push, rows, same, startAt, inOrg, settled }
}

/** The cloud refuses a site's instance on a controller it deleted and a controller whose asset number it gave away. */
async function refusedUndone(t: TestContext, dialect: TestDialect, siteDialect: TestDialect) {
  const l = await linked(t, dialect, siteDialect)
  const cloudDb = l.cloud.handle.db
  const siteDb = l.site.handle.db
  const org = l.org.id
  await cloudDb
    .insertInto('sites')
    .values(siteRow(org, 'S1') as never)
    .execute()
  await cloudDb
    .insertInto('controllers')
    .values(controllerRow(org, 'S1', 'plc1') as never)
    .execute()
  await cloudDb
    .insertInto('controllers')
    .values(controllerRow(org, 'S1', 'plc2') as never)
    .execute()
  await l.pull()
  // While apart: the cloud deletes plc2 and gives asset number A-9 to plc1; the site adds an instance on plc2,
  // and a controller plc5 with asset number A-9.
  await cloudDb.deleteFrom('controllers').where('org_id', '=', org).where('id', '=', 'plc2').execute()
  await cloudDb.updateTable('controllers').set({ asset_number: 'A-9' }).where('org_id', '=', org).where('id', '=', 'plc1').execute()
  await siteDb
    .insertInto('instances')
    .values(instanceRow(org, 'S1', 'ins1', 'plc2') as never)
    .execute()
  await siteDb
    .insertInto('controllers')
    .values(controllerRow(org, 'S1', 'plc5', { asset_number: 'A-9' }) as never)
    .execute()
  const up = await l.push()
  assert.equal(up.result.conflicts, 2)
  const down = await l.pull()
  assert.equal(down.result.applied, 4) // plc2's delete, plc1's edit, two conflict records
  assert.equal(await l.same('controllers', 'site_code, id'), 1)
  assert.equal(await l.same('instances', 'site_code, id'), 0)
  assert.equal(await l.same('link_conflicts', 'id'), 2)
  // Nothing of it goes back up.
  assert.equal((await l.push()).changes.length, 0)
}

for (const dialect of testDialects()) {
  describe(`fleet sync: real outbox changes, cloud on ${dialect}, site on SQLite`, () => {
    it('moves both ways and both sides hold the same rows; a site edit carries the base the pull set; a lost edit comes back as a conflict record', async (t) => {
      const l = await linked(t, dialect)
      const cloudDb = l.cloud.handle.db
      const siteDb = l.site.handle.db
      const org = l.org.id
      await cloudDb
        .insertInto('sites')
        .values(siteRow(org, 'S1') as never)
        .execute()
      await cloudDb
        .insertInto('sites')
        .values(siteRow(org, 'S2') as never)
        .execute()
      await cloudDb
        .insertInto('controllers')
        .values(controllerRow(org, 'S1', 'plc1') as never)
        .execute()
      await cloudDb
        .insertInto('controllers')
        .values(controllerRow(org, 'S1', 'plc2') as never)
        .execute()
      await cloudDb
        .insertInto('controllers')
        .values(controllerRow(org, 'S2', 'other') as never)
        .execute()

      const first = await l.pull()
      assert.equal(first.result.applied, 3) // S1 and its two controllers; S2 is another site server's
      assert.equal(await l.same('sites', 'code'), 1)
      assert.equal(await l.same('controllers', 'site_code, id'), 2)
      const plc1Seq = first.changes.find((c) => c.table === 'controllers' && c.key[1] === 'plc1')!.seq
      const base = await siteDb
        .selectFrom('link_base')
        .select('version')
        .where('org_id', '=', org)
        .where('row_key', '=', '["S1","plc1"]')
        .executeTakeFirstOrThrow()
      assert.equal(Number(base.version), plc1Seq)
      // Pulling again brings nothing: what the pull applied is the cloud's, and is not sent back up either.
      assert.equal((await l.pull()).changes.length, 0)
      assert.equal((await l.push()).changes.length, 0)

      // Offline on the site: an engineer fixes plc1's address, adds a controller; alarms happen.
      await siteDb.updateTable('controllers').set({ ip_address: '10.7.7.7' }).where('org_id', '=', org).where('id', '=', 'plc1').execute()
      await siteDb
        .insertInto('controllers')
        .values(controllerRow(org, 'S1', 'plc3') as never)
        .execute()
      for (const n of [1, 2, 3])
        await siteDb
          .insertInto('alarm_events')
          .values(alarmEventRow(org, 'S1', `ev${n}`) as never)
          .execute()
      await siteDb.deleteFrom('alarm_events').where('org_id', '=', org).where('event_id', '=', 'ev2').execute()
      const up = await l.push()
      const edit = up.changes.find((c) => c.table === 'controllers' && c.key[1] === 'plc1')!
      assert.equal(edit.base, plc1Seq)
      assert.deepEqual(up.result, { mark: { epoch: 'ep1', tx: 0, seq: up.changes.at(-1)!.seq }, applied: up.changes.length, skipped: 0, conflicts: 0 })
      assert.equal(await l.same('controllers', 'site_code, id'), 3)
      assert.equal(await l.same('alarm_events', 'site_code, event_id'), 2)
      // Applied in the cloud as the site server's changes: nothing of it comes back down.
      assert.equal((await l.pull()).changes.length, 0)
      // A resend of the same changes is a no-op.
      const again = await l.cloud.handle.db.selectFrom('link_marks').select('seq').where('org_id', '=', org).executeTakeFirstOrThrow()
      assert.equal(Number(again.seq), up.result.mark.seq)

      // Both edit plc2 while apart: the cloud wins, the site's version is kept as a conflict both sides see.
      await cloudDb.updateTable('controllers').set({ name: 'cloud name' }).where('org_id', '=', org).where('id', '=', 'plc2').execute()
      await siteDb.updateTable('controllers').set({ name: 'site name' }).where('org_id', '=', org).where('id', '=', 'plc2').execute()
      const clash = await l.push()
      assert.equal(clash.result.conflicts, 1)
      const down = await l.pull()
      assert.deepEqual(down.changes.map((c) => c.table).sort(), ['controllers', 'link_conflicts'])
      assert.equal(await l.same('controllers', 'site_code, id'), 3)
      assert.equal((await l.rows('site', 'controllers', 'id')).find((r) => r.id === 'plc2')!.name, 'cloud name')
      assert.equal(await l.same('link_conflicts', 'id'), 1)
      const [conflict] = await l.rows('site', 'link_conflicts', 'id')
      assert.equal(JSON.parse(String(conflict!.losing_row)).name, 'site name')

      // A deletion on each side propagates.
      await cloudDb.deleteFrom('controllers').where('org_id', '=', org).where('id', '=', 'plc3').execute()
      await siteDb.deleteFrom('alarm_events').where('org_id', '=', org).where('event_id', '=', 'ev3').execute()
      await l.pull()
      await l.push()
      assert.equal(await l.same('controllers', 'site_code, id'), 2)
      assert.equal(await l.same('alarm_events', 'site_code, event_id'), 1)
      assert.equal(await l.same('sites', 'code'), 1)
    })

    it("a seeded site server's edits of seeded rows go up on the seed's base and are accepted", async (t) => {
      const l = await linked(t, dialect)
      const cloudDb = l.cloud.handle.db
      const siteDb = l.site.handle.db
      const org = l.org.id
      await cloudDb
        .insertInto('sites')
        .values(siteRow(org, 'S1') as never)
        .execute()
      for (const id of ['plc1', 'plc2'])
        await cloudDb
          .insertInto('controllers')
          .values(controllerRow(org, 'S1', id) as never)
          .execute()
      // The seed: the cursor first, then the export, imported on the site as the cloud's rows.
      // (A cursor taken while another transaction runs stops short of the newest changes: the seed's row versions cover
      // that, enrolment/seed-window.test.ts. Here nothing else runs.)
      await l.settled()
      const cursor = await l.inOrg(() => currentCursor(l.cloud.appHandle.db, dialect, org))
      await siteDb.transaction().execute(async (trx) => {
        await withApplyOrigin(trx, 'sqlite', 'cloud', async () => {
          await trx
            .insertInto('sites')
            .values(siteRow(org, 'S1') as never)
            .execute()
          for (const id of ['plc1', 'plc2'])
            await trx
              .insertInto('controllers')
              .values(controllerRow(org, 'S1', id) as never)
              .execute()
        })
        // What enrolment records for a seed (enrolment/service.ts): each seeded row's base is the seed's cursor.
        for (const table of ['sites', 'controllers']) {
          const spec = LINKED_TABLES.find((x) => x.name === table)!
          const keys = await siteRowKeys(trx, org as OrgId, table, spec.siteColumn!, spec.key, 'S1')
          await insertBases(
            trx,
            org as OrgId,
            table,
            keys.map((k) => JSON.stringify(k)),
            cursor.seq,
          )
        }
      })
      l.startAt(cursor)
      await cloudDb.updateTable('controllers').set({ name: 'cloud edit' }).where('org_id', '=', org).where('id', '=', 'plc2').execute()
      await siteDb.updateTable('controllers').set({ ip_address: '10.5.5.5' }).where('org_id', '=', org).where('id', '=', 'plc1').execute()
      const up = await l.push()
      assert.deepEqual(
        up.changes.map((c) => [c.key[1], c.base]),
        [['plc1', cursor.seq]],
      )
      assert.equal(up.result.conflicts, 0)
      assert.equal((await l.pull()).result.applied, 1)
      assert.equal(await l.same('controllers', 'site_code, id'), 2)
    })

    it('a site change the cloud refused for a unique value or a vanished reference is undone on the site by the pull (a site server on SQLite and on PostgreSQL)', async (t) => {
      for (const siteDialect of dialect === 'postgres' ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const)) await refusedUndone(t, dialect, siteDialect)
    })

    if (dialect === 'postgres')
      it('two transactions crossing on one row: the site ends with the newest image, and a delete is not undone by an older one', async (t) => {
        const l = await linked(t, dialect)
        const cloudDb = l.cloud.handle.db
        const org = l.org.id
        await cloudDb
          .insertInto('sites')
          .values(siteRow(org, 'S1') as never)
          .execute()
        for (const id of ['plc1', 'plc2'])
          await cloudDb
            .insertInto('controllers')
            .values(controllerRow(org, 'S1', id) as never)
            .execute()
        await l.pull()

        // `early` takes its transaction id first; `late` writes the row and commits; then `early` writes it: the row's
        // newest image is early's, but (tx, seq) order reads it first.
        const cross = async (id: string, late: (trx: typeof cloudDb) => Promise<unknown>, early: (trx: typeof cloudDb) => Promise<unknown>) => {
          const xidTaken = gate()
          const lateCommitted = gate()
          const first = cloudDb.transaction().execute(async (trx) => {
            await sql`select pg_current_xact_id()`.execute(trx)
            xidTaken.open()
            await lateCommitted.opened
            await early(trx)
          })
          await xidTaken.opened
          await cloudDb.transaction().execute(late)
          lateCommitted.open()
          await first
          const { rows } = await sql<{ seq: string; tx: string }>`select seq, tx from link_outbox
            where org_id = ${org} and table_name = 'controllers' and row_key = ${JSON.stringify(['S1', id])} order by seq desc limit 2`.execute(cloudDb)
          const [newest, older] = rows.map((r) => ({ seq: Number(r.seq), tx: Number(r.tx) }))
          assert.ok(newest!.tx < older!.tx, 'the newest image lies first in (tx, seq) order')
          return { newest: newest!, older: older! }
        }
        const rename = (id: string, name: string) => (trx: typeof cloudDb) =>
          trx.updateTable('controllers').set({ name }).where('org_id', '=', org).where('id', '=', id).execute()
        const renamed = await cross('plc1', rename('plc1', 'older'), rename('plc1', 'newest'))
        await cross('plc2', rename('plc2', 'older'), (trx) => trx.deleteFrom('controllers').where('org_id', '=', org).where('id', '=', 'plc2').execute())

        const down = await l.pull()
        const superseded = down.changes.filter((c) => c.superseded).map((c) => [c.key[1], c.row.name])
        assert.deepEqual(superseded, [
          ['plc1', 'older'],
          ['plc2', 'older'],
        ])
        assert.equal(await l.same('controllers', 'site_code, id'), 1)
        assert.deepEqual(
          (await l.rows('site', 'controllers', 'id')).map((r) => [r.id, r.name]),
          [['plc1', 'newest']],
        )
        assert.equal(down.result.applied, down.changes.length - 2)
        // A reader that starts right after the newest change (a seed's cursor taken between the two) is told too.
        await l.settled()
        const fromSeed = await readChanges(cloudDb, dialect, org, renamed.newest, { limit: 10, tables: DOWN })
        assert.deepEqual(
          fromSeed.filter((c) => c.key[1] === 'plc1').map((c) => [c.seq, c.superseded]),
          [[renamed.older.seq, true]],
        )
      })

    if (dialect === 'postgres')
      it('a site edit crossing with the cloud image the site applied meanwhile still goes up, and loses as a conflict (a site server on PostgreSQL)', async (t) => {
        const l = await linked(t, dialect, 'postgres')
        const cloudDb = l.cloud.handle.db
        const siteDb = l.site.handle.db
        const org = l.org.id
        await cloudDb
          .insertInto('sites')
          .values(siteRow(org, 'S1') as never)
          .execute()
        await cloudDb
          .insertInto('controllers')
          .values(controllerRow(org, 'S1', 'plc1') as never)
          .execute()
        await l.pull()
        await cloudDb.updateTable('controllers').set({ name: 'cloud version' }).where('org_id', '=', org).where('id', '=', 'plc1').execute()

        // The pull that brings the cloud's version takes its transaction id first; the engineer's edit commits; then the
        // pull writes the row. The site's outbox: the cloud's image (origin cloud) first in (tx, seq) order, the edit after.
        const xidTaken = gate()
        const edited = gate()
        const rename = (trx: typeof siteDb, name: string) =>
          trx.updateTable('controllers').set({ name }).where('org_id', '=', org).where('id', '=', 'plc1').execute()
        const pulling = siteDb.transaction().execute(async (trx) => {
          await sql`select pg_current_xact_id()`.execute(trx)
          xidTaken.open()
          await edited.opened
          await withApplyOrigin(trx, 'postgres', 'cloud', () => rename(trx, 'cloud version'))
        })
        await xidTaken.opened
        await siteDb.transaction().execute((trx) => rename(trx, 'site version'))
        edited.open()
        await pulling

        const up = await l.push()
        assert.deepEqual(
          up.changes.map((c) => [c.key[1], c.row.name, c.superseded ?? false]),
          [['plc1', 'site version', false]],
        )
        assert.equal(up.result.conflicts, 1)
        const conflict = await cloudDb.selectFrom('link_conflicts').select(['row_key', 'losing_row']).where('org_id', '=', org).executeTakeFirstOrThrow()
        assert.equal(JSON.parse(conflict.losing_row!).name, 'site version')
        assert.deepEqual(
          (await l.rows('cloud', 'controllers', 'id')).map((r) => r.name),
          ['cloud version'],
        )
      })
  })
}
