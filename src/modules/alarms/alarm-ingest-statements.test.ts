import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { activeKey } from './lifecycle.ts'
import { findAlarm, findOpenAlarms, insertAlarmEvents, insertNewAlarms, updateAlarmsIfVersion } from './store.ts'
import { setup } from './test-helpers.ts'

// Issue 29: ingestion writes through statements of its own (PostgreSQL: `unnest` arrays, one a column; SQLite:
// multi-row VALUES), past Kysely's builder. What they write must read back exactly, and the guarantees the batch
// relies on (a version check per alarm, a skipped conflicting raise) must hold on both databases.
const AWKWARD = ['NULL', '', 'a,b', '"quoted"', '{braces}', 'back\\slash', "it's", 'ünïcode ⚡', ' padded ']

for (const dialect of testDialects()) {
  describe(`${dialect}: alarm ingestion statements`, () => {
    it('text an array literal or a VALUES list could mangle, nulls and numbers read back exactly, raised and updated', async (t) => {
      const { h, org, ev, post, read, t0 } = await setup(t, dialect)
      const raised = await post(
        AWKWARD.map((message, i) => ({ ...ev('P1', `C${i}`, 'active', t0 + i), message, value: i - 0.5, limit: i === 0 ? null : 1e300 })),
      )
      assert.equal(raised.accepted, AWKWARD.length)
      // The same tags again: the open alarms are updated (a null message keeps the one before, a value replaces it).
      const updated = await post(
        AWKWARD.map((_, i) => ({ ...ev('P1', `C${i}`, 'normal', t0 + 100 + i), message: i % 2 ? null : `${AWKWARD[i]}!`, value: -i - 0.25 })),
      )
      assert.deepEqual(
        updated.results.map((r) => r.alarmId),
        raised.results.map((r) => r.alarmId),
        'each normal moved the alarm its activation raised',
      )
      for (const [i, message] of AWKWARD.entries()) {
        const row = (await findAlarm(h.handle.db, org.id, 'S1', raised.results[i]!.alarmId!))!
        assert.deepEqual(
          [row.condition, row.message, row.value, row.limit_value, row.state, Number(row.last_event_at), row.version],
          [`C${i}`, i % 2 ? message : `${message}!`, -i - 0.25, i === 0 ? null : 1e300, 'returned_unacknowledged', t0 + 100 + i, 2],
        )
        assert.deepEqual(
          (await read(row.id)).history.map((x) => [x.seq, x.action, x.toState]),
          [
            [1, 'activated', 'active_unacknowledged'],
            [2, 'returned', 'returned_unacknowledged'],
          ],
        )
      }
      const events = await h.handle.db
        .selectFrom('alarm_events')
        .select(['event_id', 'message', 'value', 'limit_value', 'is_active', 'effect'])
        .where('org_id', '=', org.id)
        .orderBy('occurred_at')
        .execute()
      assert.deepEqual(
        events.slice(0, AWKWARD.length).map((e) => [e.message, e.value, e.limit_value, e.is_active, e.effect]),
        AWKWARD.map((message, i) => [message, i - 0.5, i === 0 ? null : 1e300, 1, 'activated']),
      )
      assert.deepEqual(
        events.slice(AWKWARD.length).map((e) => [e.message, e.value, e.effect]),
        AWKWARD.map((message, i) => [i % 2 ? null : `${message}!`, -i - 0.25, 'returned']),
      )
    })

    it('the batch update writes an alarm only while it has the version read; a raise whose tag is open is skipped, not an error', async (t) => {
      const { h, org, ev, post, t0 } = await setup(t, dialect)
      const ids = (await post([ev('P1', 'A', 'active', t0), ev('P1', 'B', 'active', t0), ev('P1', 'C', 'active', t0)])).results.map((r) => r.alarmId!)
      const rows = await Promise.all(ids.map(async (id) => (await findAlarm(h.handle.db, org.id, 'S1', id))!))
      const { written, raisedAgain } = await h.handle.db.transaction().execute(async (trx) => ({
        written: await updateAlarmsIfVersion(
          trx,
          org.id,
          'S1',
          rows.map((row, i) => ({ row: { ...row, message: 'changed', version: row.version + 1 }, readVersion: i === 1 ? row.version - 1 : row.version })),
        ),
        // A second open alarm of tag A (a concurrent batch's raise): the unique index refuses it quietly.
        raisedAgain: await insertNewAlarms(trx, [{ ...rows[0]!, id: 'alm_again' }]),
      }))
      assert.equal(written, 2, 'the row read at a stale version is not written')
      assert.equal(raisedAgain, 0)
      const after = await Promise.all(ids.map(async (id) => (await findAlarm(h.handle.db, org.id, 'S1', id))!))
      assert.deepEqual(
        after.map((r) => [r.message, r.version]),
        [
          ['changed', 2],
          [null, 1],
          ['changed', 2],
        ],
      )
      assert.equal(await findAlarm(h.handle.db, org.id, 'S1', 'alm_again'), undefined)
    })

    it('the open-alarm lookup reads fewer than 20 columns a row, the ones ingestion writes back, with their stored values', async (t) => {
      // Issue 29 (session 20): V8 keeps an object given 20 or more properties one by one (a driver's row) as a
      // dictionary; a batch's thousand `select *` rows of 21 columns were most of what it promoted to the old generation.
      const { h, org, ev, post, t0 } = await setup(t, dialect)
      const hot = { ...ev('P1', 'A', 'active', t0), message: 'hot', value: 2.5 }
      const [id] = (await post([hot])).results.map((r) => r.alarmId!)
      const [row, ...others] = await findOpenAlarms(h.handle.db, org.id, 'S1', [activeKey('P1', 'A'), activeKey('P2', 'none')])
      assert.equal(others.length, 0)
      assert.ok(Object.keys(row!).length < 20, `${Object.keys(row!).length} columns`)
      const stored = (await findAlarm(h.handle.db, org.id, 'S1', id!))!
      for (const [column, value] of Object.entries(row!)) assert.deepEqual(value, stored[column as keyof typeof stored], column)
      assert.deepEqual([row!.id, row!.message, row!.value, row!.version, row!.is_out_of_service], [id, 'hot', 2.5, 1, 0])
    })

    it('statements in flight at once each send their own rows (PostgreSQL: no two share the bytes of their arrays)', async (t) => {
      const { h, org, t0 } = await setup(t, dialect)
      // Eight inserts at once, each on a connection of its own: each encodes its arrays, then waits for a connection.
      const batches = Array.from({ length: 8 }, (_, b) =>
        Array.from({ length: 300 }, (_, i) => ({
          org_id: org.id,
          site_code: 'S1',
          event_id: `flight-${b}-${i}`,
          alarm_id: null,
          instance_id: 'P1',
          condition: `C${b}`,
          priority: 'high',
          is_active: b % 2,
          occurred_at: t0 + b * 1000 + i,
          received_at: t0,
          message: `batch ${b} row ${i}`,
          value: b + i / 1000,
          limit_value: null,
          effect: 'none',
        })),
      )
      assert.deepEqual(
        await Promise.all(batches.map((rows) => insertAlarmEvents(h.handle.db, rows))),
        batches.map((rows) => rows.length),
      )
      const stored = await h.handle.db
        .selectFrom('alarm_events')
        .select(['event_id', 'condition', 'is_active', 'occurred_at', 'message', 'value'])
        .where('org_id', '=', org.id)
        .where('event_id', 'like', 'flight-%')
        .execute()
      const byId = new Map(stored.map((r) => [r.event_id, [r.condition, r.is_active, Number(r.occurred_at), r.message, r.value]]))
      assert.equal(byId.size, 8 * 300)
      for (const row of batches.flat()) {
        assert.deepEqual(byId.get(row.event_id), [row.condition, row.is_active, row.occurred_at, row.message, row.value], row.event_id)
      }
    })
  })
}
