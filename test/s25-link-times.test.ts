// Session 25: stop 43's CI failure. The fuzz suite sent a heartbeat whose backlog's `oldestAt` was an epoch-ms integer
// past the last instant a date holds (the schema allowed any safe integer); every later read of that site server —
// its read, the list, the revoke's answer — turned it into a date-time and answered 500. A pushed change's `at` had the
// same bound and lands in the conflict records' `losingAt`. Both now end at 9999-12-31T23:59:59.999Z, as every stored
// time does (input-guard.ts; 400 naming the field, nothing stored), and a value stored before the bound reads as that
// date, not a 500. A historian chunk's sample time now has the range a site's live samples have.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_TIME } from '../src/clock.ts'
import { LAST_ISO_MS } from '../src/http/input-guard.ts'
import { harness, testDialects } from './harness.ts'
import { linkRequest, seedCloudLink } from './support/fleet-link.ts'
import { chunkDigest } from '../src/modules/fleet/historian-chunks/wire.ts'
import type { LinkSample } from '../src/modules/historian/link.ts'

const LATEST = new Date(LAST_ISO_MS).toISOString()

for (const dialect of testDialects()) {
  describe(`${dialect}: the link's times are dates (stop 43)`, () => {
    it("a heartbeat's oldestAt or a pushed change's at past a date's range is a 400 naming it, storing nothing; the last date passes; one stored before the bound reads as the latest date on every answer that shows it", async (t) => {
      const h = await harness(t, dialect, { SITEGRID_MODE: 'cloud' })
      const { org, key } = await h.orgWithKey('owner')
      const owner = { org, apiKey: key }
      const link = await seedCloudLink(h, owner, 'T')
      const as = linkRequest(h, owner, link)
      const server = async () => {
        const res = await h.inject(owner, { url: `/api/admin/site-servers/${link.serverId}` })
        assert.equal(res.statusCode, 200, res.body)
        return res.json() as { backlog: { up: { oldestAt: string | null } } }
      }
      const beat = (oldestAt: number) =>
        as('PUT', '/api/link/heartbeat', { state: 'online', lastError: null, backlog: { items: 1, bytes: 10, oldestAt }, pulledTo: { tx: 0, seq: 0 } })
      const pointerOf = (body: string) => (JSON.parse(body) as { errors?: Array<{ pointer: string }> }).errors?.map((e) => e.pointer)

      const before = (await server()).backlog
      for (const tooLate of [LAST_ISO_MS + 1, MAX_TIME + 1, Number.MAX_SAFE_INTEGER]) {
        const res = await beat(tooLate)
        assert.equal(res.statusCode, 400, res.body)
        assert.deepEqual(pointerOf(res.body), ['/backlog/oldestAt'])
      }
      assert.deepEqual((await server()).backlog, before, 'a refused heartbeat stores nothing')
      assert.equal((await beat(LAST_ISO_MS)).statusCode, 204)
      assert.equal((await server()).backlog.up.oldestAt, LATEST)

      const image = { org_id: org.id, code: link.site, name: 'renamed', updated_at: h.clock.now() }
      const change = { seq: 4, tx: 0, table: 'sites', site: link.site, key: [link.site], op: 'upsert', row: image, base: null, origin: '', at: LAST_ISO_MS + 1 }
      const conflictsBefore = await h.handle.db.selectFrom('link_conflicts').select('id').where('org_id', '=', org.id).execute()
      const pushed = await as('POST', '/api/link/push', { epoch: link.epoch, after: { tx: 0, seq: 3 }, changes: [change] })
      assert.equal(pushed.statusCode, 400, pushed.body)
      assert.deepEqual(pointerOf(pushed.body), ['/changes/0/at'])
      assert.equal((await h.handle.db.selectFrom('link_conflicts').select('id').where('org_id', '=', org.id).execute()).length, conflictsBefore.length)

      // A historian chunk's sample time: the range a site's live samples take (a Date's), so that what a site holds goes up.
      const chunk = (ts: number) => {
        const samples = [['T-LCV-1', 'speed', ts, 1.5, null, 192]]
        return as('PUT', `/api/link/historian/bat_T_late/chunks/0`, { site: link.site, samples, sha256: chunkDigest(samples as LinkSample[]) })
      }
      for (const ts of [MAX_TIME + 1, -MAX_TIME - 1, Number.MAX_SAFE_INTEGER]) {
        const res = await chunk(ts)
        assert.equal(res.statusCode, 400, res.body)
        assert.deepEqual(pointerOf(res.body), ['/samples/0/2'])
      }
      assert.equal(await h.handle.db.selectFrom('link_chunks').select('chunk').where('batch_id', '=', 'bat_T_late').executeTakeFirst(), undefined)
      assert.equal((await chunk(MAX_TIME)).statusCode, 200)

      // What an earlier version stored: the heartbeat's report and a conflict's losing time past a date's range.
      const tooLate = Number.MAX_SAFE_INTEGER
      await h.handle.db
        .updateTable('site_servers')
        .set({ backlog: JSON.stringify({ up: { items: 1, bytes: 10, oldestAt: tooLate }, pulledTo: { tx: 0, seq: 0 }, state: 'online' }) })
        .where('id', '=', link.serverId)
        .execute()
      await h.handle.db.updateTable('link_conflicts').set({ losing_at: tooLate }).where('id', '=', link.conflicts[0]!).execute()
      assert.equal((await server()).backlog.up.oldestAt, LATEST)
      const listed = await h.inject(owner, { url: '/api/admin/site-servers' })
      assert.equal(listed.statusCode, 200, listed.body)
      const conflict = await h.inject(owner, { url: `/api/link/conflicts/${link.conflicts[0]}` })
      assert.equal(conflict.statusCode, 200, conflict.body)
      assert.equal(conflict.json().losingAt, LATEST)
      const revoked = await h.inject(owner, { method: 'POST', url: `/api/admin/site-servers/${link.serverId}/revoke` })
      assert.equal(revoked.statusCode, 200, revoked.body)
      assert.equal(revoked.json().status, 'revoked')
    })
  })
}
