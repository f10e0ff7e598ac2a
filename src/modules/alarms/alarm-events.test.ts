import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { MIN, setup } from './test-helpers.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: alarm events`, () => {
    it('a resent batch is reported as duplicates and writes no new rows; an id repeated within a batch is a duplicate', async (t) => {
      const { member, ev, post, rows, t0 } = await setup(t, dialect)
      const batch = [ev('P1', 'A', 'active', t0), ev('P2', 'B', 'active', t0), ev('P1', 'A', 'normal', t0 + 1000)]
      const first = await post(batch)
      assert.deepEqual([first.accepted, first.duplicates, first.refused], [3, 0, 0])
      const counts = [await rows('alarms'), await rows('alarm_events'), await rows('alarm_history')]
      const again = await post(batch)
      assert.deepEqual([again.accepted, again.duplicates, again.refused], [0, 3, 0])
      assert.deepEqual(
        again.results.map((r) => r.alarmId),
        first.results.map((r) => r.alarmId),
        'a duplicate names the alarm its first delivery applied to',
      )
      assert.deepEqual([await rows('alarms'), await rows('alarm_events'), await rows('alarm_history')], counts)
      const inBatch = await member('POST', '/api/sites/S1/alarms/events', {
        events: [ev('P3', 'C', 'active', t0), { ...ev('P3', 'C', 'normal', t0 + 1), eventId: 'same' }, { ...ev('P3', 'D', 'active', t0), eventId: 'same' }],
      })
      assert.deepEqual(
        inBatch.json().results.map((r: { status: string }) => r.status),
        ['accepted', 'accepted', 'duplicate'],
      )
    })

    it('events for unknown instances or stamped in the future are refused one by one; the others are stored', async (t) => {
      const { h, ev, post, rows, t0 } = await setup(t, dialect)
      const res = await post([ev('P1', 'A', 'active', t0), ev('NOPE', 'A', 'active', t0), ev('P2', 'A', 'active', h.clock.now() + 6 * MIN)])
      assert.deepEqual(
        res.results.map((r) => [r.status, r.code]),
        [
          ['accepted', undefined],
          ['refused', 'UnknownInstance'],
          ['refused', 'OccurredInFuture'],
        ],
      )
      assert.deepEqual([res.accepted, res.refused], [1, 2])
      assert.equal(await rows('alarms'), 1)
      assert.equal(await rows('alarm_events'), 1)
    })

    it('batch size is 1 to 1000 events; a bad event fails the request by its pointer and stores nothing', async (t) => {
      const { member, ev, rows, t0 } = await setup(t, dialect)
      const many = Array.from({ length: 1001 }, (_, i) => ({ ...ev('P1', `C${i}`, 'active', t0) }))
      assert.equal((await member('POST', '/api/sites/S1/alarms/events', { events: many })).statusCode, 400)
      assert.equal((await member('POST', '/api/sites/S1/alarms/events', { events: [] })).statusCode, 400)
      const bad = await member('POST', '/api/sites/S1/alarms/events', {
        events: [ev('P1', 'A', 'active', t0), { ...ev('P1', 'B', 'active', t0), priority: 'urgent' }],
      })
      assert.equal(bad.statusCode, 400)
      assert.equal(bad.json().errors[0].pointer.startsWith('/events/1/priority'), true)
      assert.equal(await rows('alarm_events'), 0)
      const thousand = await member('POST', '/api/sites/S1/alarms/events', { events: many.slice(0, 1000) })
      assert.equal(thousand.json().accepted, 1000)
    })

    it("an event older than the alarm's last one changes nothing (a late resend never rewinds an alarm)", async (t) => {
      const { ev, post, read, t0 } = await setup(t, dialect)
      const id = (await post([ev('P1', 'A', 'active', t0 + 5000)])).results[0]!.alarmId!
      const late = await post([ev('P1', 'A', 'normal', t0)])
      assert.equal(late.results[0]!.status, 'accepted')
      assert.equal((await read(id)).state, 'active_unacknowledged')
    })
  })
}
