import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { MIN, setup } from './test-helpers.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: a shelve ends at its expiry in event time (reads, history and alarm load agree)`, () => {
    it('events delivered after the expiry are judged by when they occurred: suppressed before it, annunciated after it, the expiry recorded between', async (t) => {
      const { h, admin, ev, post, read, t0 } = await setup(t, dialect)
      const id = (await post([ev('P1', 'VIB', 'active', t0), ev('P1', 'VIB', 'normal', t0 + 1000)])).results[0]!.alarmId!
      const until = h.clock.now() + 10 * MIN
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${id}/shelve`, { comment: 'nuisance', until: new Date(until).toISOString() })).statusCode, 200)
      h.clock.advance(20 * MIN) // the gateway was offline; its buffered events arrive after the expiry
      const batch = await post([ev('P1', 'VIB', 'active', until - 2 * MIN), ev('P1', 'VIB', 'normal', until - MIN), ev('P1', 'VIB', 'active', until + MIN)])
      assert.deepEqual(
        batch.results.map((r) => [r.status, r.alarmId]),
        [
          ['accepted', id],
          ['accepted', id],
          ['accepted', id],
        ],
      )
      const effects = await h.handle.db.selectFrom('alarm_events').select(['occurred_at', 'effect']).where('alarm_id', '=', id).orderBy('occurred_at').execute()
      assert.deepEqual(
        effects.map((e) => e.effect),
        ['activated', 'returned', 'suppressed', 'returned', 'activated'],
      )
      const alarm = await read(id)
      assert.equal(alarm.state, 'active_unacknowledged')
      assert.equal(alarm.shelvedUntil, null)
      assert.deepEqual(
        alarm.history.slice(-4).map((x) => [x.action, x.toState, x.actorKind, Date.parse(x.at)]),
        [
          ['activated', 'shelved', 'apiKey', until - 2 * MIN],
          ['returned', 'shelved', 'apiKey', until - MIN],
          ['shelve_expired', 'returned_unacknowledged', 'system', until],
          ['activated', 'active_unacknowledged', 'apiKey', until + MIN],
        ],
      )
      assert.deepEqual(
        alarm.history.map((x) => x.seq),
        alarm.history.map((_x, i) => i + 1),
        'one history row per version, in order',
      )
      const load = await admin('GET', `/api/sites/S1/alarms/load?from=${new Date(t0).toISOString()}&to=${new Date(h.clock.now()).toISOString()}`)
      assert.equal(load.statusCode, 200, load.body)
      assert.deepEqual(
        [load.json().activations, load.json().suppressedActivations],
        [2, 1],
        'the activation while shelved is not annunciated; the one after the expiry is',
      )
    })

    it("a shelve that expired before the batch arrived ends after the batch's earlier events, once, and closes a normal alarm", async (t) => {
      const { h, admin, ev, post, read, rows, t0 } = await setup(t, dialect)
      const id = (await post([ev('P1', 'VIB', 'active', t0), ev('P1', 'VIB', 'normal', t0 + 1000)])).results[0]!.alarmId!
      await admin('POST', `/api/sites/S1/alarms/${id}/acknowledge`, {})
      // Acknowledged and normal: closed. Shelving reopens it until the shelve ends.
      const until = h.clock.now() + 5 * MIN
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${id}/shelve`, { comment: 'c', until: new Date(until).toISOString() })).statusCode, 200)
      h.clock.advance(6 * MIN)
      const batch = await post([ev('P1', 'VIB', 'active', until - MIN), ev('P1', 'VIB', 'normal', until - MIN + 1000)])
      assert.deepEqual(
        batch.results.map((r) => r.alarmId),
        [id, id],
      )
      const alarm = await read(id)
      assert.equal(alarm.state, 'returned_unacknowledged', 'the activation while shelved still needs acknowledging once the shelve ends')
      assert.deepEqual(
        alarm.history.slice(-3).map((x) => [x.action, x.toState, Date.parse(x.at)]),
        [
          ['activated', 'shelved', until - MIN],
          ['returned', 'shelved', until - MIN + 1000],
          ['shelve_expired', 'returned_unacknowledged', until],
        ],
      )
      const historyRows = await rows('alarm_history')
      await read(id)
      assert.equal(await rows('alarm_history'), historyRows, 'the expiry is recorded once')
      // A later activation of the same tag goes to the same open alarm (returned, unacknowledged), annunciated.
      const next = await post([ev('P1', 'VIB', 'active', h.clock.now() - 1000)])
      assert.equal(next.results[0]!.alarmId, id)
      assert.equal((await read(id)).state, 'active_unacknowledged')
    })
  })
}
