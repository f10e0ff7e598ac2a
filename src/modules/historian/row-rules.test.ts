// The historian settings' rules for rows that arrive without a request: retention here (the hardening seed sets no
// policy to craft); tag marks through a real import in tenant-transfer/crafted-values.test.ts.
import assert from 'node:assert/strict'
import { it } from 'node:test'
import { retentionRowBreak } from './row-rules.ts'

const policy = { org_id: 'o', site_code: 'S1', retention_days: 30, last_run_at: null, last_deleted: 0, oldest_kept_ts: null, updated_at: 1 }

it("a retention row keeps PUT …/historian/retention's bounds", () => {
  assert.equal(retentionRowBreak(policy), undefined)
  assert.equal(retentionRowBreak({ ...policy, retention_days: null }), undefined, 'no policy')
  assert.equal(retentionRowBreak({ ...policy, retention_days: 0 })?.pointer, '/retentionDays')
  assert.equal(retentionRowBreak({ ...policy, retention_days: 36_501 })?.pointer, '/retentionDays')
  assert.deepEqual(retentionRowBreak({ ...policy, last_deleted: -1 }), { pointer: '/samplesDeleted', message: 'must be >= 0' })
})
