// The alarm tables' rules for rows that arrive without a request (a tenant package, the fleet link): the shelve
// window's here (the hardening seed has none to craft); the others through a real import in
// tenant-transfer/crafted-values.test.ts.
import assert from 'node:assert/strict'
import { it } from 'node:test'
import { alarmRowBreak, alarmShelveRowBreak } from './row-rules.ts'

const window = { org_id: 'o', site_code: 'S1', alarm_id: 'alm_1', seq: 2, tag_key: '3:ins', starts_at: 1_000, ends_at: 2_000 }

it('a shelve window ends no earlier than it starts and follows a history row', () => {
  assert.equal(alarmShelveRowBreak(window), undefined)
  assert.equal(alarmShelveRowBreak({ ...window, ends_at: 1_000 }), undefined, 'unshelved at once')
  assert.deepEqual(alarmShelveRowBreak({ ...window, ends_at: 999 }), { pointer: '/endsAt', message: 'must not be before startsAt' })
  assert.deepEqual(alarmShelveRowBreak({ ...window, seq: 0 }), { pointer: '/seq', message: 'must be >= 1' })
})

it("a closed alarm holds no tag key, and a shelved one's state is shelved", () => {
  const alarm = {
    instance_id: 'ins',
    condition: 'HI',
    priority: 'high',
    message: null,
    state: 'normal',
    is_active: 0,
    is_acknowledged: 1,
    is_out_of_service: 0,
    shelved_until: null,
    active_key: null,
    activation_count: 1,
  }
  assert.equal(alarmRowBreak(alarm), undefined)
  assert.deepEqual(alarmRowBreak({ ...alarm, active_key: '3:insHI' }), { pointer: '/activeKey', message: 'must be null: the alarm is closed' })
  assert.deepEqual(alarmRowBreak({ ...alarm, shelved_until: 5 }), { pointer: '/state', message: 'must be shelved, the state its flags give' })
  assert.equal(alarmRowBreak({ ...alarm, shelved_until: 5, state: 'shelved', active_key: '3:insHI' }), undefined)
})
