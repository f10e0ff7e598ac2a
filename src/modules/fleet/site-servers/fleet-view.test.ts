import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { harness, testDialects, type TestDialect } from '../../../../test/harness.ts'
import type { Principal } from '../../../identity.ts'
import { CONTACT_EVERY_MS, createLinkService } from '../link-service.ts'
import { START } from '../outbox/store.ts'
import { ONLINE_WITHIN_MS } from './service.ts'

/** A cloud cell with sites S1 and S2 and a site server registered for S1. */
async function cloudWithServer(t: TestContext, dialect: TestDialect) {
  const h = await harness(t, dialect, { SITEGRID_MODE: 'cloud' })
  const { org, key } = await h.orgWithKey('owner')
  const owner = { org, apiKey: key }
  for (const code of ['S1', 'S2']) {
    assert.equal((await h.inject(owner, { method: 'POST', url: '/api/sites', payload: { code, name: `Plant ${code}` } })).statusCode, 201)
  }
  const reg = await h.inject(owner, { method: 'POST', url: '/api/admin/site-servers', payload: { name: 'Pit 3', sites: ['S1'] } })
  assert.equal(reg.statusCode, 201, reg.body)
  return { h, org, owner, id: reg.json().id as string }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: the fleet view of a site server (online, backlog each way; issue 26)`, () => {
    it('never before its first contact; online within 60 s of it, then offline; down counts what the cloud holds for its sites after the reported position', async (t) => {
      const { h, org, owner, id } = await cloudWithServer(t, dialect)
      const read = async () => {
        const res = await h.inject(owner, { method: 'GET', url: `/api/admin/site-servers/${id}` })
        assert.equal(res.statusCode, 200, res.body)
        return res.json()
      }
      const registered = await read()
      assert.deepEqual([registered.connection, registered.down], ['never', null])

      const link = createLinkService({ handle: h.handle, clock: h.clock, pullPollMs: 10 })
      const principal: Principal = { orgId: org.id, kind: 'link', role: 'member', subject: id, isPlatformAdmin: false, sites: ['S1'] }
      const up = { items: 3, bytes: 120, oldestAt: h.clock.now() }
      await link.heartbeat(principal, { state: 'online', lastError: null, backlog: up, pulledTo: START, versions: { protocol: 1, schema: 'x' } })
      const beat = await read()
      assert.equal(beat.connection, 'online')
      // Reported in epoch ms, answered as a date-time like the down backlog's and every other instant.
      assert.deepEqual(beat.backlog.up, { ...up, oldestAt: new Date(up.oldestAt).toISOString() })
      // S1's site row is the one change for it; S2's is another server's business.
      assert.equal(beat.down.items, 1)
      assert.ok(beat.down.bytes > 0)
      assert.ok(beat.down.oldestAt !== null)
      const listed = await h.inject(owner, { method: 'GET', url: '/api/admin/site-servers' })
      assert.deepEqual(
        listed.json().items.map((s: { id: string; connection: string; down: { items: number } }) => [s.id, s.connection, s.down.items]),
        [[id, 'online', 1]],
      )
      assert.equal(
        (
          await h.inject(owner, {
            method: 'POST',
            url: '/api/sites/S1/controllers',
            payload: { name: 'PLC 1', platform: 1, assetNumber: 'A-1', connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.1' } },
          })
        ).statusCode,
        201,
      )
      assert.equal((await read()).down.items, 2)

      h.clock.advance(ONLINE_WITHIN_MS)
      assert.equal((await read()).connection, 'offline')
    })

    it('a push or a pull records the contact at most every 10 s per process, a heartbeat always; an empty pull moves past what is readable for other sites', async (t) => {
      const { h, org, owner, id } = await cloudWithServer(t, dialect)
      const contact = async () =>
        (await h.handle.db.selectFrom('site_servers').select('last_contact_at').where('id', '=', id).executeTakeFirstOrThrow()).last_contact_at
      const link = createLinkService({ handle: h.handle, clock: h.clock, pullPollMs: 10 })
      const principal: Principal = { orgId: org.id, kind: 'link', role: 'member', subject: id, isPlatformAdmin: false, sites: ['S1'] }
      const never = new AbortController().signal

      const t0 = h.clock.now()
      const first = await link.pull(principal, { ...START, limit: 10, waitMs: 0 }, never)
      assert.deepEqual(
        first.changes.map((c) => [c.table, c.site]),
        [['sites', 'S1']],
      )
      assert.equal(await contact(), t0)
      h.clock.advance(CONTACT_EVERY_MS - 1)
      await link.pull(principal, { ...first.next, limit: 10, waitMs: 0 }, never)
      assert.equal(await contact(), t0, 'within 10 s of the last write: no write')
      h.clock.advance(1)
      await link.pull(principal, { ...first.next, limit: 10, waitMs: 0 }, never)
      assert.equal(await contact(), t0 + CONTACT_EVERY_MS, '10 s on: written again')
      h.clock.advance(1)
      await link.heartbeat(principal, {
        state: 'online',
        lastError: null,
        backlog: { items: 0, bytes: 0, oldestAt: null },
        pulledTo: first.next,
        versions: { protocol: 1, schema: 'x' },
      })
      assert.equal(await contact(), t0 + CONTACT_EVERY_MS + 1, 'a heartbeat always writes')

      // Another site's change (and its audit row): this server's pull answers nothing and, once they are readable
      // (PostgreSQL: once every older transaction of the cluster ended), a cursor past them.
      const other = await h.inject(owner, { method: 'PUT', url: '/api/sites/S2', payload: { name: 'Plant S2 renamed' } })
      assert.equal(other.statusCode, 200, other.body)
      const latest = await h.handle.db
        .selectFrom('link_outbox')
        .select(['tx', 'seq'])
        .where('org_id', '=', org.id)
        .orderBy('tx', 'desc')
        .orderBy('seq', 'desc')
        .executeTakeFirstOrThrow()
      let next = first.next
      for (let i = 0; i < 400; i++) {
        const answer = await link.pull(principal, { ...first.next, limit: 10, waitMs: 0 }, never)
        assert.deepEqual(answer.changes, [])
        next = answer.next
        if (next.seq >= Number(latest.seq)) break
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      assert.deepEqual(next, { tx: Number(latest.tx), seq: Number(latest.seq) })
    })
  })
}
