import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { signedIn } from '../../../test/site/support.ts'
import { future, MIN, setup, type Method } from './test-helpers.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: alarm events — races, access and site delete`, () => {
    it('concurrent batches activating the same instance and condition open exactly one alarm', async (t) => {
      const { member, ev, rows, t0 } = await setup(t, dialect)
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => member('POST', '/api/sites/S1/alarms/events', { events: [ev('P1', 'RACE', 'active', t0 + i)] })),
      )
      assert.ok(
        answers.every((a) => a.statusCode === 200),
        answers.map((a) => a.body).join('\n'),
      )
      assert.equal(new Set(answers.map((a) => a.json().results[0].alarmId)).size, 1)
      assert.equal(await rows('alarms'), 1)
    })

    it('the database refuses a second open alarm for the same instance and condition (unique index)', async (t) => {
      const { h, org, ev, post, t0 } = await setup(t, dialect)
      const id = (await post([ev('P1', 'U', 'active', t0)])).results[0]!.alarmId!
      const row = await h.handle.db.selectFrom('alarms').selectAll().where('org_id', '=', org.id).where('id', '=', id).executeTakeFirstOrThrow()
      await assert.rejects(
        h.handle.db
          .insertInto('alarms')
          .values({ ...row, id: 'alm_second' })
          .execute(),
      )
      await h.handle.db
        .insertInto('alarms')
        .values({ ...row, id: 'alm_closed', active_key: null })
        .execute()
      await h.handle.db
        .insertInto('alarms')
        .values({ ...row, id: 'alm_closed2', active_key: null })
        .execute()
    })

    it('only API keys post events; members read and acknowledge; another organisation gets the uniform 404', async (t) => {
      const { h, org, ev, post, member, rows, t0 } = await setup(t, dialect)
      const id = (await post([ev('P1', 'A', 'active', t0)])).results[0]!.alarmId!
      const other = await h.orgWithKey('owner')
      const theirs = (method: Method, url: string, payload?: unknown) =>
        h.inject({ org: other.org, apiKey: other.key }, { method, url, payload: payload as object })
      await theirs('POST', '/api/sites', { code: 'S1', name: 'theirs' })
      const missing = await member('GET', '/api/sites/NOPE/alarms')
      assert.equal(missing.statusCode, 404)
      for (const [method, url, body] of [
        ['GET', `/api/sites/S1/alarms/${id}`],
        ['POST', `/api/sites/S1/alarms/${id}/acknowledge`, {}],
        ['POST', `/api/sites/S1/alarms/${id}/out-of-service`, { comment: 'c' }],
      ] as const) {
        const res = await theirs(method, url, body)
        assert.equal(res.statusCode, 404, url)
        assert.equal(res.json().detail, missing.json().detail)
      }
      assert.equal((await theirs('GET', '/api/sites/S1/alarms')).json().items.length, 0)
      assert.equal((await member('GET', `/api/sites/S1/alarms/${id}`)).json().state, 'active_unacknowledged')
      // A person (here a site-PIN owner) acknowledges but cannot fabricate process events.
      const { accessToken } = await signedIn(h, org, 'owner')
      const person = (method: Method, url: string, payload?: unknown) => h.inject({ org, bearer: accessToken }, { method, url, payload: payload as object })
      const refused = await person('POST', '/api/sites/S1/alarms/events', { events: [ev('P1', 'B', 'active', t0)] })
      assert.equal(refused.statusCode, 403)
      assert.equal(refused.json().code, 'Forbidden')
      assert.equal(await rows('alarm_events'), 1)
      const ack = await person('POST', `/api/sites/S1/alarms/${id}/acknowledge`)
      assert.equal(ack.statusCode, 200, ack.body)
      assert.equal(ack.json().history.at(-1).actorKind, 'sitePin')
    })

    it('site delete preview counts alarms and the delete removes them with their events, history and shelve windows', async (t) => {
      const { h, admin, ev, post, rows, t0 } = await setup(t, dialect)
      const [first] = (await post([ev('P1', 'A', 'active', t0), ev('P2', 'B', 'active', t0)])).results
      assert.equal((await admin('POST', `/api/sites/S1/alarms/${first!.alarmId}/shelve`, { comment: 'c', until: future(h, MIN) })).statusCode, 200)
      assert.equal(await rows('alarm_shelves'), 1)
      const preview = await admin('DELETE', '/api/sites/S1')
      assert.equal(preview.statusCode, 409)
      assert.equal(preview.json().wouldDelete.alarms, 2)
      assert.equal((await admin('DELETE', '/api/sites/S1?confirm=S1')).statusCode, 204)
      assert.deepEqual([await rows('alarms'), await rows('alarm_events'), await rows('alarm_history'), await rows('alarm_shelves')], [0, 0, 0, 0])
    })
  })
}
