import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects, type Harness } from '../../../test/harness.ts'
import { addSiteUser, login, signedIn } from '../../../test/site/support.ts'
import type { Org } from '../../identity.ts'
import { verifyPin } from './pin-hash.ts'

const newUser = (role: string, extra: Record<string, unknown> = {}) => ({
  email: `${role}-${Math.random().toString(36).slice(2, 8)}@Plant.example`,
  displayName: `New ${role}`,
  siteRole: role,
  pin: '13572468',
  ...extra,
})

async function userRows(h: Harness, org: Org) {
  return h.handle.db
    .selectFrom('site_users')
    .select(['id', 'email', 'site_role', 'display_name', 'pin_hash'])
    .where('org_id', '=', org.id)
    .orderBy('id')
    .execute()
}

for (const dialect of testDialects()) {
  describe(`${dialect}: site users over HTTP`, () => {
    it('a site admin adds a user: 201 without the PIN, the PIN stored only as a salted scrypt hash, the e-mail lower-cased', async (t) => {
      const h = await harness(t, dialect) // the production cost (N = 2^15)
      const org = await h.createOrg()
      const admin = await signedIn(h, org, 'admin')
      const body = newUser('member')
      const res = await h.inject({ org, bearer: admin.accessToken }, { method: 'POST', url: '/api/site/users', payload: body })
      assert.equal(res.statusCode, 201)
      const user = res.json()
      assert.deepEqual(Object.keys(user).sort(), ['createdAt', 'displayName', 'email', 'id', 'pinChangedAt', 'siteRole', 'updatedAt'])
      assert.equal(user.email, body.email.toLowerCase())
      assert.match(user.id, /^su_/)
      const row = (await userRows(h, org)).find((r) => r.id === user.id)!
      assert.match(row.pin_hash, /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
      assert.ok(!row.pin_hash.includes(body.pin))
      assert.ok(await verifyPin(body.pin, row.pin_hash))
      assert.ok(!h.rawLogs().includes(body.pin))
      const twin = await addSiteUser(h, org, 'member', { pin: body.pin })
      const twinRow = (await userRows(h, org)).find((r) => r.id === twin.id)!
      assert.notEqual(twinRow.pin_hash, row.pin_hash, 'per-user salt: the same PIN hashes differently')
      assert.equal((await login(h, org, body.email, body.pin)).statusCode, 200)
    })
  })
}
