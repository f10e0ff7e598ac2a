import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { future, MIN, setup } from './test-helpers.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: alarm shelving and out of service (ISA-18.2)`, () => {
    it('admins shelve until a time with a comment; activations while shelved are suppressed; unshelve returns to the process state', async (t) => {
      const { h, admin, member, ev, post, read, t0 } = await setup(t, dialect)
      const id = (await post([ev('P1', 'VIB', 'active', t0), ev('P1', 'VIB', 'normal', t0 + 1000)])).results[0]!.alarmId!
      const until = future(h, 3_600_000)
      const shelved = await admin('POST', `/api/sites/S1/alarms/${id}/shelve`, { comment: 'sensor drift', until })
      assert.equal(shelved.statusCode, 200, shelved.body)
      assert.equal(shelved.json().state, 'shelved')
      assert.equal(shelved.json().shelvedUntil, until)
      const again = await post([ev('P1', 'VIB', 'active', t0 + 2000)])
      assert.equal(again.results[0]!.alarmId, id)
      const during = await read(id)
      assert.equal(during.state, 'shelved')
      assert.equal(during.isActive, true)
      assert.equal((await member('POST', `/api/sites/S1/alarms/${id}/acknowledge`, {})).statusCode, 409, 'a shelved alarm is not acknowledged')
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${id}/shelve`, { comment: 'again', until })).statusCode, 409)
      const back = await admin('POST', `/api/sites/S1/alarms/${id}/unshelve`, { comment: 'fixed' })
      assert.equal(back.json().state, 'active_unacknowledged')
      assert.deepEqual(
        back
          .json()
          .history.slice(-3)
          .map((x: { action: string; toState: string; comment: string | null }) => [x.action, x.toState, x.comment]),
        [
          ['shelved', 'shelved', 'sensor drift'],
          ['activated', 'shelved', null],
          ['unshelved', 'active_unacknowledged', 'fixed'],
        ],
      )
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${id}/unshelve`, { comment: 'x' })).statusCode, 409)
    })

    it('a shelve ends by itself at its expiry, recorded by system at that time; a normal alarm then closes', async (t) => {
      const { h, admin, ev, post, read, t0 } = await setup(t, dialect)
      const id = (await post([ev('P1', 'VIB', 'active', t0), ev('P1', 'VIB', 'normal', t0 + 1000)])).results[0]!.alarmId!
      const until = future(h, 10 * MIN)
      await admin('POST', `/api/sites/S1/alarms/${id}/shelve`, { comment: 'nuisance', until })
      await admin('POST', `/api/sites/S1/alarms/${id}/acknowledge`, {}).then((r) => assert.equal(r.statusCode, 409))
      h.clock.advance(10 * MIN)
      const after = await read(id)
      assert.equal(after.state, 'returned_unacknowledged')
      assert.equal(after.shelvedUntil, null)
      const last = after.history.at(-1)!
      assert.deepEqual([last.action, last.actorKind, last.at], ['shelve_expired', 'system', until])
      assert.equal((await read(id)).history.length, after.history.length, 'expiry is recorded once')
      const listed = (await admin('GET', '/api/sites/S1/alarms?state=shelved')).json()
      assert.equal(listed.items.length, 0)
    })

    it('shelve: until must be in the future and at most 7 days ahead; a comment is required', async (t) => {
      const { h, admin, ev, post, read, t0 } = await setup(t, dialect)
      const id = (await post([ev('P1', 'A', 'active', t0)])).results[0]!.alarmId!
      for (const [body, pointer] of [
        [{ comment: 'c', until: future(h, -1000) }, '/until'],
        [{ comment: 'c', until: future(h, 7 * 86_400_000 + 1000) }, '/until'],
        [{ until: future(h, 60_000) }, '/comment'],
        [{ comment: '', until: future(h, 60_000) }, '/comment'],
      ] as const) {
        const res = await admin('POST', `/api/sites/S1/alarms/${id}/shelve`, body)
        assert.equal(res.statusCode, 400, JSON.stringify(body))
        assert.equal(res.json().errors[0].pointer, pointer)
      }
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${id}/shelve`, { comment: 'c', until: future(h, 7 * 86_400_000) })).statusCode, 200)
      assert.equal((await read(id)).history.length, 2)
    })

    it('out of service replaces a shelve and holds through a return to normal; return to service goes to the process state and closes a normal alarm', async (t) => {
      const { h, admin, member, ev, post, read, t0 } = await setup(t, dialect)
      const id = (await post([ev('P1', 'FLOW', 'active', t0)])).results[0]!.alarmId!
      await member('POST', `/api/sites/S1/alarms/${id}/acknowledge`, {})
      await admin('POST', `/api/sites/S1/alarms/${id}/shelve`, { comment: 'c', until: future(h, MIN) })
      const oos = await admin('POST', `/api/sites/S1/alarms/${id}/out-of-service`, { comment: 'transmitter replaced' })
      assert.equal(oos.json().state, 'out_of_service')
      assert.equal(oos.json().shelvedUntil, null)
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${id}/out-of-service`, { comment: 'x' })).statusCode, 409)
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${id}/shelve`, { comment: 'x', until: future(h, MIN) })).statusCode, 409)
      await post([ev('P1', 'FLOW', 'normal', t0 + 1000)])
      assert.equal((await read(id)).state, 'out_of_service')
      // Still open: a new activation folds into it rather than raising a second alarm.
      const folded = await post([ev('P1', 'FLOW', 'active', t0 + 2000), ev('P1', 'FLOW', 'normal', t0 + 3000)])
      assert.equal(folded.results[0]!.alarmId, id)
      const rts = await admin('POST', `/api/sites/S1/alarms/${id}/return-to-service`, { comment: 'done' })
      assert.equal(rts.json().state, 'returned_unacknowledged')
      await member('POST', `/api/sites/S1/alarms/${id}/acknowledge`, {})
      assert.equal((await read(id)).state, 'normal')
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${id}/return-to-service`, { comment: 'x' })).statusCode, 409)
      const raised = await post([ev('P1', 'FLOW', 'active', t0 + 4000)])
      assert.notEqual(raised.results[0]!.alarmId, id, 'the closed alarm freed its tag')
    })

    it('shelving a closed alarm reopens it unless a newer alarm of its tag is open (409)', async (t) => {
      const { h, admin, member, ev, post, t0 } = await setup(t, dialect)
      const first = (await post([ev('P1', 'T', 'active', t0), ev('P1', 'T', 'normal', t0 + 1)])).results[0]!.alarmId!
      await member('POST', `/api/sites/S1/alarms/${first}/acknowledge`, {})
      await post([ev('P1', 'T', 'active', t0 + 2)])
      const res = await admin('POST', `/api/sites/S1/alarms/${first}/shelve`, { comment: 'c', until: future(h, MIN) })
      assert.equal(res.statusCode, 409)
      assert.equal(res.json().code, 'AlarmStateConflict')
    })
  })
}
