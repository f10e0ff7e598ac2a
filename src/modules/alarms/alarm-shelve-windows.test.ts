import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { describe, it } from 'node:test'
import { testDialects, type TestDialect } from '../../../test/harness.ts'
import { MIN, setup, type Ev } from './test-helpers.ts'

const iso = (ms: number) => new Date(ms).toISOString()

/** The shared setup plus: the effect stored for each posted event, and the load endpoint's two activation counts. */
async function windows(t: TestContext, dialect: TestDialect) {
  const s = await setup(t, dialect)
  const effects = async (events: Ev[]) => {
    const rows = await s.h.handle.db
      .selectFrom('alarm_events')
      .select(['event_id', 'effect'])
      .where('org_id', '=', s.org.id)
      .where(
        'event_id',
        'in',
        events.map((e) => e.eventId),
      )
      .execute()
    const byId = new Map(rows.map((r) => [r.event_id, r.effect]))
    return events.map((e) => byId.get(e.eventId))
  }
  const load = async (from: number, to: number) => {
    const res = await s.admin('GET', `/api/sites/S1/alarms/load?from=${iso(from)}&to=${iso(to)}`)
    assert.equal(res.statusCode, 200, res.body)
    return [res.json().activations, res.json().suppressedActivations] as [number, number]
  }
  const shelve = async (id: string, until: number) => {
    const res = await s.admin('POST', `/api/sites/S1/alarms/${id}/shelve`, { comment: 'nuisance', until: iso(until) })
    assert.equal(res.statusCode, 200, res.body)
  }
  return { ...s, effects, load, shelve }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: shelving is judged in event time against the shelve windows`, () => {
    it('a late activation inside a shelve that a read has already expired is suppressed, and the alarm load does not count it', async (t) => {
      const { h, ev, post, read, effects, load, shelve, t0 } = await windows(t, dialect)
      const id = (await post([ev('P1', 'VIB', 'active', t0), ev('P1', 'VIB', 'normal', t0 + 1000)])).results[0]!.alarmId!
      const start = h.clock.now()
      await shelve(id, start + 10 * MIN)
      h.clock.advance(20 * MIN)
      const expired = await read(id) // the read applies the expiry before the late events arrive
      assert.deepEqual([expired.state, expired.history.at(-1)!.action], ['returned_unacknowledged', 'shelve_expired'])
      const late = [ev('P1', 'VIB', 'active', start + 2 * MIN), ev('P1', 'VIB', 'normal', start + 3 * MIN)]
      const batch = await post(late)
      assert.deepEqual(
        batch.results.map((r) => [r.status, r.alarmId]),
        [
          ['accepted', id],
          ['accepted', id],
        ],
      )
      assert.deepEqual(await effects(late), ['suppressed', 'returned'])
      assert.deepEqual(await load(start - MIN, h.clock.now()), [0, 1], 'the activation while shelved is not annunciated')
      assert.equal((await read(id)).state, 'returned_unacknowledged')
    })

    it('a late activation inside the expired shelve of an alarm that has since closed is suppressed too', async (t) => {
      const { h, admin, ev, post, read, effects, load, shelve, t0 } = await windows(t, dialect)
      const id = (await post([ev('P1', 'VIB', 'active', t0), ev('P1', 'VIB', 'normal', t0 + 1000)])).results[0]!.alarmId!
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${id}/acknowledge`, {})).statusCode, 200)
      const start = h.clock.now()
      await shelve(id, start + 5 * MIN) // reopens the closed alarm until the shelve ends
      h.clock.advance(10 * MIN)
      assert.equal((await read(id)).state, 'normal', 'the expiry closed it again')
      const late = [ev('P1', 'VIB', 'active', start + MIN)]
      const raised = (await post(late)).results[0]!.alarmId!
      assert.deepEqual(await effects(late), ['suppressed'])
      assert.equal((await read(raised)).state, 'active_unacknowledged', 'still active once the shelve is over: the operator sees it now')
      assert.deepEqual(await load(start - MIN, h.clock.now()), [0, 1])
    })

    it('a late activation that occurred before the shelve began is annunciated, although it arrives while the alarm is shelved', async (t) => {
      const { h, ev, post, read, effects, load, shelve, t0 } = await windows(t, dialect)
      const id = (await post([ev('P1', 'VIB', 'active', t0), ev('P1', 'VIB', 'normal', t0 + 1000)])).results[0]!.alarmId!
      const start = h.clock.now()
      await shelve(id, start + 30 * MIN)
      const before = [ev('P1', 'VIB', 'active', start - 5 * MIN)]
      await post(before)
      assert.deepEqual(await effects(before), ['activated'])
      const during = await read(id)
      assert.deepEqual([during.state, during.isActive], ['shelved', true], 'the shelve in force still hides the alarm now')
      h.clock.advance(5 * MIN)
      const inside = [ev('P1', 'VIB', 'normal', start + MIN), ev('P1', 'VIB', 'active', start + 2 * MIN)]
      await post(inside)
      assert.deepEqual(await effects(inside), ['returned', 'suppressed'])
      assert.deepEqual(await load(start - 10 * MIN, start + 10 * MIN), [1, 1])
    })

    it('an activation after an unshelve is annunciated; one inside the shelve that arrives after the unshelve is suppressed', async (t) => {
      const { h, admin, ev, post, read, effects, load, shelve, t0 } = await windows(t, dialect)
      const id = (await post([ev('P1', 'VIB', 'active', t0), ev('P1', 'VIB', 'normal', t0 + 1000)])).results[0]!.alarmId!
      const start = h.clock.now()
      await shelve(id, start + 60 * MIN)
      h.clock.advance(10 * MIN)
      const unshelvedAt = h.clock.now()
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${id}/unshelve`, { comment: 'fixed' })).statusCode, 200)
      h.clock.advance(10 * MIN)
      const stream = [ev('P1', 'VIB', 'active', start + 5 * MIN), ev('P1', 'VIB', 'normal', start + 6 * MIN), ev('P1', 'VIB', 'active', unshelvedAt + 2 * MIN)]
      await post(stream)
      assert.deepEqual(await effects(stream), ['suppressed', 'returned', 'activated'], 'the window ended at the unshelve, not at the planned expiry')
      assert.deepEqual(await load(start, h.clock.now()), [1, 1])
      assert.equal((await read(id)).state, 'active_unacknowledged')
    })

    it('taking a shelved alarm out of service ends its shelve window there: an activation after the return to service is annunciated', async (t) => {
      const { h, admin, ev, post, effects, load, shelve, t0 } = await windows(t, dialect)
      const id = (await post([ev('P1', 'VIB', 'active', t0), ev('P1', 'VIB', 'normal', t0 + 1000)])).results[0]!.alarmId!
      const start = h.clock.now()
      await shelve(id, start + 60 * MIN)
      h.clock.advance(5 * MIN)
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${id}/out-of-service`, { comment: 'maintenance' })).statusCode, 200)
      h.clock.advance(5 * MIN)
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${id}/return-to-service`, { comment: 'done' })).statusCode, 200)
      h.clock.advance(10 * MIN)
      const after = [ev('P1', 'VIB', 'active', start + 15 * MIN)]
      await post(after)
      assert.deepEqual(await effects(after), ['activated'])
      assert.deepEqual(await load(start, h.clock.now()), [1, 0])
    })
  })
}
