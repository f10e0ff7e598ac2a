import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { harness, sleep, testDialects } from '../../../test/harness.ts'
import { FLUSH_SAMPLES } from './service/write-pipeline.ts'
import { multipart, plant, standardParts } from './test-setup.ts'

const MAPPING = 'historian_tag,instance_id,tag_key\nA,ins_pump,p\nB,ins_pump,q\n'
const line = (i: number) => `${new Date(Date.UTC(2024, 0, 1) + Math.floor(i / 2) * 1000).toISOString()},${i % 2 === 0 ? 'A' : 'B'},${i}\n`
const rows = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => line(from + k)).join('')

/** A promise and the function that resolves it (Promise.withResolvers is Node 22). */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

/** Resolves with what `promise` gave, or with 'pending' if it has not settled within `ms`. */
const within = <T>(promise: Promise<T>, ms: number) => Promise.race([promise, sleep(ms).then(() => 'pending' as const)])

// Only PostgreSQL has a pool (SQLite's one connection is shared by the whole process).
for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`${dialect}: a historian import and the connection pool`, () => {
    it('takes a second connection while the pool has one to spare, and gives it back at its next write once a request waits', {
      timeout: 180_000,
    }, async (t: TestContext) => {
      const h = await harness(t, dialect, {}, { appPoolSize: 3 })
      const p = await plant(h)
      const first = FLUSH_SAMPLES + 1_000
      const second = first + FLUSH_SAMPLES + 1_000
      const total = second + 10
      const body = multipart(standardParts(p.siteCode, 'long', `timestamp,tag,value\n${rows(0, total)}`, MAPPING))
      // The body up to each gate goes at once (in network-sized pieces); the rest waits for the gate.
      const cuts = [body.payload.indexOf(line(first)), body.payload.indexOf(line(second)), body.payload.length]
      const gates = [gate(), gate(), gate()]
      gates[0]!.open()
      const pieces = async function* () {
        let at = 0
        for (const [k, cut] of cuts.entries()) {
          await gates[k]!.promise
          for (; at < cut; at = Math.min(cut, at + 64 * 1024)) yield body.payload.subarray(at, Math.min(cut, at + 64 * 1024))
        }
      }
      const answer = h.inject(p.owner, { method: 'POST', url: '/api/historian/import-batches', payload: Readable.from(pieces()), headers: body.headers })

      // The first write transaction committed: the import holds its session's connection and the second one.
      for (let i = 0; ; i++) {
        const row = await h.handle.db.selectFrom('historian_batches').select('samples_stored').where('org_id', '=', p.owner.org.id).executeTakeFirst()
        if (row !== undefined && Number(row.samples_stored) > 0) break
        assert.ok(i < 600, 'the first write committed')
        await sleep(100)
      }
      const pool = h.appHandle
      const release = gate()
      const holds: Array<Promise<void>> = []
      try {
        while (pool.spareConnections() > 0) {
          const held = gate()
          holds.push(
            pool.db.connection().execute(async () => {
              held.open()
              await release.promise
            }),
          )
          await held.promise
        }
        assert.equal(holds.length, 1, 'of a pool of 3 the import holds 2 connections')

        // A request now waits for a connection …
        const waiting = sql`select 1 as one`.execute(pool.db)
        assert.equal(await within(waiting, 300), 'pending')
        assert.ok(pool.spareConnections() < 0)
        // … and gets the import's second one at the import's next write, long before the import ends.
        gates[1]!.open()
        const served = await within(waiting, 30_000)
        assert.notEqual(served, 'pending', 'the waiting request was served while the import still ran')
        assert.equal(await within(answer, 0), 'pending')
      } finally {
        // Whatever failed above, the upload and the held connections end, so the application can close.
        for (const g of gates) g.open()
        release.open()
        await Promise.all(holds)
      }
      const res = await answer
      assert.equal(res.statusCode, 201, res.body)
      assert.equal(res.json().samplesStored, total)
    })
  })
}
