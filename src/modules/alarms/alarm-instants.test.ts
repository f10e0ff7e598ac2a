import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { DATE_TIME_RULE } from '../../http/problem.ts'
import { MIN, setup } from './test-helpers.ts'

const DAY_MS = 86_400_000
/** The UTC day of `ms` as YYYY-MM-DD. */
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)
/** `ms` written with an offset of hours only (`+01`): RFC 3339 allows it through ajv's `date-time`, Date.parse does not. */
const hoursOffset = (ms: number) => `${new Date(ms + 3_600_000).toISOString().slice(0, 19)}+01`

function assertUnreadable(res: { statusCode: number; body: string; json(): unknown }, pointer: string, where: string) {
  assert.equal(res.statusCode, 400, res.body)
  const problem = res.json() as { code: string; errors: Array<{ in: string; pointer: string; message: string }> }
  assert.equal(problem.code, 'ValidationFailed')
  assert.deepEqual(problem.errors[0], { in: where, pointer, message: DATE_TIME_RULE })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: a date-time the schema admits but no clock can read (a leap second, an offset of hours only) is a 400 naming the field`, () => {
    it('a shelve until 23:59:60Z or +01 is refused and leaves the alarm, its history and its shelve windows as they were', async (t) => {
      const { h, admin, ev, post, read, rows, t0 } = await setup(t, dialect)
      const id = (await post([ev('P1', 'HI', 'active', t0)])).results[0]!.alarmId!
      const before = await read(id)
      for (const until of [`${dayOf(h.clock.now() + DAY_MS)}T23:59:60Z`, hoursOffset(h.clock.now() + 30 * MIN)]) {
        const res = await admin('POST', `/api/sites/S1/alarms/${id}/shelve`, { comment: 'nuisance', until })
        assertUnreadable(res, '/until', 'body')
      }
      assert.deepEqual(await read(id), before)
      assert.equal(await rows('alarm_shelves'), 0)
    })

    it('a batch with one unreadable occurredAt is refused whole, naming that event, and stores nothing', async (t) => {
      const { h, member, ev, rows, t0 } = await setup(t, dialect)
      const events = [ev('P1', 'HI', 'active', t0), { ...ev('P2', 'HI', 'active', t0), occurredAt: hoursOffset(t0) }, ev('P3', 'HI', 'active', t0)]
      const res = await member('POST', '/api/sites/S1/alarms/events', { events })
      assertUnreadable(res, '/events/1/occurredAt', 'body')
      const leap = await member('POST', '/api/sites/S1/alarms/events', {
        events: [{ ...ev('P1', 'HI', 'active', t0), occurredAt: `${dayOf(h.clock.now() - DAY_MS)}T23:59:60Z` }],
      })
      assertUnreadable(leap, '/events/0/occurredAt', 'body')
      assert.deepEqual([await rows('alarms'), await rows('alarm_events'), await rows('alarm_history')], [0, 0, 0])
    })

    it('an alarm-load period with an unreadable from or to is refused naming it', async (t) => {
      const { admin, t0 } = await setup(t, dialect)
      const iso = (ms: number) => new Date(ms).toISOString()
      const from = await admin('GET', `/api/sites/S1/alarms/load?from=${encodeURIComponent(hoursOffset(t0))}&to=${iso(t0 + 60 * MIN)}`)
      assertUnreadable(from, '/from', 'query')
      const to = await admin('GET', `/api/sites/S1/alarms/load?from=${iso(t0)}&to=${encodeURIComponent(`${dayOf(t0)}T23:59:60Z`)}`)
      assertUnreadable(to, '/to', 'query')
    })
  })
}
