import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../../test/harness.ts'
import { CHEAP_PINS, addSiteUser, login, signedIn } from '../../../test/site/support.ts'
import { FIRST_LOCK_MS, LOCK_THRESHOLD } from './lockout.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: unlocking a site user's sign-in`, () => {
    it("a site owner ends a user's lock at once (POST /api/site/users/{id}/unlock), audited; admins get 403, another organisation's user 404", async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const other = await h.createOrg()
      const owner = await signedIn(h, org, 'owner')
      const admin = await signedIn(h, org, 'admin')
      const member = await addSiteUser(h, org, 'member')
      const stranger = await addSiteUser(h, other, 'member')
      for (let i = 0; i < LOCK_THRESHOLD; i++) assert.equal((await login(h, org, member.email, '00000000', `10.8.${i}.1`)).statusCode, 401)
      assert.equal((await login(h, org, member.email, member.pin, '10.8.9.1')).statusCode, 423)
      const unlock = (bearer: string, userId: string) => h.inject({ org, bearer }, { method: 'POST', url: `/api/site/users/${userId}/unlock` })

      assert.equal((await unlock(admin.accessToken, member.id)).statusCode, 403)
      assert.equal((await unlock(owner.accessToken, stranger.id)).statusCode, 404)
      const done = await unlock(owner.accessToken, member.id)
      assert.equal(done.statusCode, 200)
      assert.deepEqual(done.json(), { email: member.email, wasLockedUntil: new Date(h.clock.now() + FIRST_LOCK_MS).toISOString() })
      assert.equal((await login(h, org, member.email, member.pin, '10.8.9.2')).statusCode, 200, 'the rightful user signs in at once')
      assert.equal((await unlock(owner.accessToken, member.id)).json().wasLockedUntil, null, 'not locked any more')

      const audit = await h.handle.db
        .selectFrom('audit_events')
        .select(['actor_kind', 'actor_id', 'target'])
        .where('org_id', '=', org.id)
        .where('action', '=', 'site_user.unlocked')
        .orderBy('at')
        .execute()
      assert.deepEqual(
        audit.map((r) => [r.actor_kind, r.actor_id, r.target]),
        [
          ['sitePin', owner.user.id, member.email],
          ['sitePin', owner.user.id, member.email],
        ],
      )
    })
  })
}
