import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { future, MIN, setup } from './test-helpers.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: alarm lifecycle (ISA-18.2)`, () => {
    it('activation raises active_unacknowledged; acknowledge → active_acknowledged; return → normal and closed; each transition has who and when', async (t) => {
      const { member, ev, post, read, t0 } = await setup(t, dialect)
      const raised = await post([ev('P1', 'HI_TEMP', 'active', t0)])
      assert.equal(raised.accepted, 1)
      const id = raised.results[0]!.alarmId!
      assert.match(id, /^alm_[0-9A-Z]{26}$/)
      assert.equal((await read(id)).state, 'active_unacknowledged')
      const ack = await member('POST', `/api/sites/S1/alarms/${id}/acknowledge`, { comment: 'seen' })
      assert.equal(ack.statusCode, 200)
      assert.equal(ack.json().state, 'active_acknowledged')
      await post([ev('P1', 'HI_TEMP', 'normal', t0 + MIN)])
      const done = await read(id)
      assert.equal(done.state, 'normal')
      assert.deepEqual(
        done.history.map((x) => [x.seq, x.action, x.fromState, x.toState]),
        [
          [1, 'activated', 'normal', 'active_unacknowledged'],
          [2, 'acknowledged', 'active_unacknowledged', 'active_acknowledged'],
          [3, 'returned', 'active_acknowledged', 'normal'],
        ],
      )
      assert.equal(done.history[0]!.at, new Date(t0).toISOString())
      assert.equal(done.history[1]!.actorKind, 'apiKey')
      assert.equal(done.history[1]!.comment, 'seen')
      assert.ok(done.history.every((x) => x.actorId.length > 0))
      // Closed: the next activation raises a new alarm.
      const again = await post([ev('P1', 'HI_TEMP', 'active', t0 + 2 * MIN)])
      assert.notEqual(again.results[0]!.alarmId, id)
    })

    it('return before acknowledge → returned_unacknowledged; a re-activation re-arms the same alarm; acknowledge of RTN → normal', async (t) => {
      const { member, ev, post, read, rows, t0 } = await setup(t, dialect)
      const id = (await post([ev('P1', 'LO_LEVEL', 'active', t0), ev('P1', 'LO_LEVEL', 'normal', t0 + 1000)])).results[0]!.alarmId!
      assert.equal((await read(id)).state, 'returned_unacknowledged')
      const re = await post([ev('P1', 'LO_LEVEL', 'active', t0 + 2000)])
      assert.equal(re.results[0]!.alarmId, id)
      const rearmed = await read(id)
      assert.equal(rearmed.state, 'active_unacknowledged')
      assert.equal(rearmed.activationCount, 2)
      await post([ev('P1', 'LO_LEVEL', 'normal', t0 + 3000)])
      const ack = await member('POST', `/api/sites/S1/alarms/${id}/acknowledge`, {})
      assert.equal(ack.json().state, 'normal')
      assert.equal(await rows('alarms'), 1)
    })

    it('acknowledging an alarm with nothing to acknowledge is 409 AlarmStateConflict and records nothing', async (t) => {
      const { member, ev, post, read, t0 } = await setup(t, dialect)
      const id = (await post([ev('P1', 'X', 'active', t0)])).results[0]!.alarmId!
      await member('POST', `/api/sites/S1/alarms/${id}/acknowledge`, {})
      const res = await member('POST', `/api/sites/S1/alarms/${id}/acknowledge`, {})
      assert.equal(res.statusCode, 409)
      assert.equal(res.json().code, 'AlarmStateConflict')
      assert.equal((await read(id)).history.length, 2)
    })

    it('members read and acknowledge but cannot shelve, unshelve, take out of or return to service (403)', async (t) => {
      const { h, member, ev, post, read, t0 } = await setup(t, dialect)
      const id = (await post([ev('P1', 'A', 'active', t0)])).results[0]!.alarmId!
      for (const [path, body] of [
        ['shelve', { comment: 'c', until: future(h, MIN) }],
        ['unshelve', { comment: 'c' }],
        ['out-of-service', { comment: 'c' }],
        ['return-to-service', { comment: 'c' }],
      ] as const) {
        const res = await member('POST', `/api/sites/S1/alarms/${id}/${path}`, body)
        assert.equal(res.statusCode, 403, path)
      }
      assert.equal((await read(id)).history.length, 1)
    })

    it('bulk acknowledge acknowledges what it can in one request and reports the rest per id', async (t) => {
      const { member, ev, post, read, t0 } = await setup(t, dialect)
      const r = await post([ev('P1', 'A', 'active', t0), ev('P1', 'B', 'active', t0), ev('P2', 'C', 'active', t0)])
      const [a, b, c] = r.results.map((x) => x.alarmId!)
      await member('POST', `/api/sites/S1/alarms/${c}/acknowledge`, {})
      const res = await member('POST', '/api/sites/S1/alarms/acknowledge', { alarmIds: [a, b, c, 'alm_NOPE'], comment: 'shift handover' })
      assert.equal(res.statusCode, 200)
      assert.equal(res.json().acknowledged, 2)
      assert.deepEqual(
        res.json().results.map((x: { status: string; code?: string }) => [x.status, x.code]),
        [
          ['acknowledged', undefined],
          ['acknowledged', undefined],
          ['refused', 'AlarmStateConflict'],
          ['refused', 'NotFound'],
        ],
      )
      assert.equal((await read(a!)).state, 'active_acknowledged')
      assert.equal((await read(a!)).history[1]!.comment, 'shift handover')
    })
  })
}
