// Session 21 review: the electrical network's per-site write lock (service/network.ts writeNetwork) is per site. While
// another process holds site S1's (a transaction of its own here, on the same PostgreSQL), every kind of network write
// of site S2 goes through at once, and the same write to S1 waits for that transaction to end, then succeeds; writes
// waiting for S1 take turns in the process before they borrow a connection, so they cannot starve the pool.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts'
import { withOrgScope } from '../../src/db/tenant-scope.ts'
import { lockUntilCommit } from '../../src/db/transaction-lock.ts'
import { CLI_ACTOR } from '../../src/identity.ts'
import type { OrgId } from '../../src/ids.ts'
import { NetworkWritesQueueFull } from '../../src/modules/electrical/errors.ts'
import { createElectricalService } from '../../src/modules/electrical/service.ts'
import { createSitesService } from '../../src/modules/sites/service.ts'
import { BASE, electricalSetup, RADIAL } from '../../src/modules/electrical/test-support.ts'
import { sleep, testDialects, type TestDialect } from '../harness.ts'

const WAIT_MS = 1_500
/**
 * Another site's request answers while S1's lock is still held: if it waited for that lock it could never answer
 * before the release below, so this bound only turns a hang into a failure (not a timing figure).
 */
async function beforeRelease<T>(answer: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} waited for S1's lock`)), 30_000)
  })
  try {
    return await Promise.race([answer, hang])
  } finally {
    clearTimeout(timer)
  }
}

/** A transaction of the test's own holding the named lock until `release()`; resolves once it holds it. */
async function holdSiteLock(handle: DatabaseHandle, dialect: TestDialect, name: string): Promise<{ release: () => void; holder: Promise<void> }> {
  let release!: () => void
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let locked!: () => void
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve
  })
  const holder = handle.db.transaction().execute(async (trx) => {
    await lockUntilCommit(trx, dialect, name)
    locked()
    await released
  })
  await isLocked
  return { release, holder }
}

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
      const { release, holder } = await holdSiteLock(h.handle, dialect, `electrical ${org.id} S1`)
      try {
        for (const [i, write] of writes(S2, 1).entries()) {
          const res = await beforeRelease(write(), `S2 write ${i}`)
          assert.ok(res.statusCode < 300, `S2 write ${i}: ${res.statusCode} ${res.body}`)
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

    it("many writes waiting for one site's lock hold no more than one pooled connection: the other sites' reads and writes go on", async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      assert.equal((await as('POST', '/api/sites', { code: 'S2', name: 'Plant 2' })).statusCode, 201)
      const { release, holder } = await holdSiteLock(h.handle, dialect, `electrical ${org.id} S1`)
      try {
        // More writes of S1 than the pool (10) has connections, all waiting for S1's turn.
        const waiting = Array.from({ length: 15 }, (_, i) => as('POST', `${BASE}/nodes`, { id: `W${i}`, name: 'waits', nodeType: 3 }))
        await sleep(300)
        const created = await beforeRelease(as('POST', '/api/sites/S2/electrical/nodes', { id: 'N1', name: 'Bus', nodeType: 3 }), 'the S2 create')
        assert.equal(created.statusCode, 201, created.body)
        const read = await beforeRelease(as('GET', '/api/sites/S2/electrical/network'), 'the S2 read')
        assert.equal(read.statusCode, 200, read.body)
        release()
        await holder
        for (const res of await Promise.all(waiting)) assert.equal(res.statusCode, 201, res.body)
      } finally {
        release()
        await holder
      }
    })

    it('a process keeps at most maxWaitingWrites network writes waiting: one more is refused at once (503), nothing written', async (t) => {
      const { h, org } = await electricalSetup(t, dialect)
      const handle = await connectDatabase(h.config.databaseUrl, { poolSize: 3 })
      t.after(() => handle.close())
      const electrical = createElectricalService({
        handle,
        clock: h.clock,
        sites: createSitesService({ handle, clock: h.clock, dependents: [] }),
        maxWaitingWrites: 2,
      })
      const orgId = org.id as OrgId
      const create = (id: string) => withOrgScope(orgId, () => electrical.createNode(orgId, CLI_ACTOR, 'S1', { id, name: id, nodeType: 3 }))
      const { release, holder } = await holdSiteLock(h.handle, dialect, `electrical ${org.id} S1`)
      try {
        const waiting = [create('A'), create('B')]
        await sleep(200)
        await assert.rejects(create('C'), NetworkWritesQueueFull)
        release()
        await holder
        assert.deepEqual(
          (await Promise.all(waiting)).map((n) => n.id),
          ['A', 'B'],
        )
        assert.deepEqual(
          (await withOrgScope(orgId, () => electrical.getNetwork(orgId, 'S1'))).nodes.map((n) => n.id),
          ['A', 'B'],
        )
        assert.equal((await create('C')).id, 'C', 'taken once the others are done')
      } finally {
        release()
        await holder
      }
    })
  })
}
