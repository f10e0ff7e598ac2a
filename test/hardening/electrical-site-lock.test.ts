// Session 21 review: the electrical network's per-site write lock (service/network.ts writeNetwork) is per site. While
// another process holds site S1's (a transaction of its own here, on the same PostgreSQL), every kind of network write
// of site S2 goes through at once, and the same write to S1 waits for that transaction to end, then succeeds.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { lockUntilCommit } from '../../src/db/transaction-lock.ts'
import { BASE, electricalSetup, RADIAL } from '../../src/modules/electrical/test-support.ts'
import { sleep, testDialects } from '../harness.ts'

const WAIT_MS = 1_500

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`${dialect}: the electrical write lock is per site`, () => {
    it("a site's network writes go on while another process holds another site's lock; the held site's wait for it", async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      assert.equal((await as('POST', '/api/sites', { code: 'S2', name: 'Plant 2' })).statusCode, 201)
      const S2 = '/api/sites/S2/electrical'
      for (const base of [BASE, S2]) assert.equal((await as('PUT', `${base}/network`, RADIAL)).statusCode, 200)
      const writes = (base: string, n: number) => [
        () => as('PUT', `${base}/network`, RADIAL),
        () => as('POST', `${base}/nodes`, { id: `N${n}`, name: 'New bus', nodeType: 3 }),
        () => as('PUT', `${base}/nodes/MSB`, { name: `Main ${n}` }),
        () => as('POST', `${base}/edges`, { sourceId: 'ISO', targetId: 'MSB', edgeType: 0 }),
        () => as('DELETE', `${base}/edges?source=ISO&target=MSB&type=0`),
        () => as('DELETE', `${base}/nodes/ISO?cascade=true`),
      ]
      let release!: () => void
      const released = new Promise<void>((resolve) => {
        release = resolve
      })
      let locked!: () => void
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve
      })
      const holder = h.handle.db.transaction().execute(async (trx) => {
        await lockUntilCommit(trx, dialect, `electrical ${org.id} S1`)
        locked()
        await released
      })
      await isLocked
      try {
        for (const [i, write] of writes(S2, 1).entries()) {
          const started = Date.now()
          const res = await write()
          assert.ok(res.statusCode < 300, `S2 write ${i}: ${res.statusCode} ${res.body}`)
          assert.ok(Date.now() - started < WAIT_MS, `S2 write ${i} waited ${Date.now() - started} ms for S1's lock`)
        }
        const waiting = writes(BASE, 2).map((write) => write())
        let settled = 0
        for (const p of waiting) void p.then(() => settled++)
        await sleep(WAIT_MS)
        assert.equal(settled, 0, "S1's writes wait while its lock is held")
        release()
        await holder
        for (const res of await Promise.all(waiting)) assert.ok(res.statusCode < 500, `${res.statusCode} ${res.body}`)
      } finally {
        release()
        await holder
      }
    })
  })
}
