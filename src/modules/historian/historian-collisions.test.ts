import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { testDialects } from '../../../test/harness.ts'
import { MAX_COLLISIONS_LISTED } from './service/batch-record.ts'
import { FLUSH_SAMPLES } from './service/write-pipeline.ts'
import { plant, sampleCount, series, sharedHarness, standardParts, upload } from './test-setup.ts'

const MAPPING = 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'
const FIRST = 'timestamp,tag,value,quality\n2024-05-01T00:00:00Z,A,1,Good\n2024-05-01T00:01:00Z,A,2,Good\n2024-05-01T00:02:00Z,A,3,Uncertain\n'
const SECOND = 'timestamp,tag,value,quality\n2024-05-01T00:01:00Z,A,20,Bad\n2024-05-01T00:02:00Z,A,Stopped,Good\n2024-05-01T00:03:00Z,A,40,Good\n'

for (const dialect of testDialects()) {
  describe(`${dialect}: historian collisions`, () => {
    const shared = sharedHarness(dialect)

    it('without force each collision is listed with the instance, tag, timestamp, the stored value kept and the value discarded', async () => {
      const h = shared()
      const p = await plant(h)
      const first = await upload(h, p.owner, standardParts(p.siteCode, 'long', FIRST, MAPPING))
      assert.equal(first.statusCode, 201, first.body)
      const second = await upload(h, p.owner, standardParts(p.siteCode, 'long', SECOND, MAPPING))
      assert.equal(second.statusCode, 201, second.body)
      const a = first.json().id as string
      const b = second.json().id as string
      const batch = second.json()
      assert.equal(batch.collisions, 2)
      const expected = [
        {
          instanceId: 'ins_pump',
          tagKey: 'p',
          ts: '2024-05-01T00:01:00.000Z',
          resolution: 'keptStored',
          kept: { batchId: a, value: 2, text: null, quality: 'good' },
          discarded: { batchId: b, value: 20, text: null, quality: 'bad' },
        },
        {
          instanceId: 'ins_pump',
          tagKey: 'p',
          ts: '2024-05-01T00:02:00.000Z',
          resolution: 'keptStored',
          kept: { batchId: a, value: 3, text: null, quality: 'uncertain' },
          discarded: { batchId: b, value: null, text: 'Stopped', quality: 'good' },
        },
      ]
      assert.deepEqual(batch.collisionReport, { count: 2, listed: 2, first: expected, reportUrl: `/api/historian/import-batches/${b}/collisions` })
      // The stored values are the first batch's, as listed.
      assert.deepEqual(
        (await series(h, p, 'instanceId=ins_pump&tag=p')).samples.map((s) => s.value),
        [1, 2, 3, 40],
      )

      const page1 = await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches/${b}/collisions?limit=1` })
      assert.equal(page1.statusCode, 200, page1.body)
      assert.deepEqual(page1.json().items, [expected[0]])
      assert.equal(page1.json().count, 2)
      assert.equal(page1.json().listed, 2)
      assert.notEqual(page1.json().nextCursor, null)
      const page2 = await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches/${b}/collisions?limit=1&cursor=${page1.json().nextCursor}` })
      assert.deepEqual(page2.json().items, [expected[1]])
      assert.equal(page2.json().nextCursor, null)
      // The first batch met nothing.
      const none = await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches/${a}/collisions` })
      assert.deepEqual(none.json(), { batchId: a, count: 0, listed: 0, items: [], nextCursor: null })
    })

    it("with force the replaced values are listed: this batch's value kept, the earlier one discarded", async () => {
      const h = shared()
      const p = await plant(h)
      const a = (await upload(h, p.owner, standardParts(p.siteCode, 'long', FIRST, MAPPING))).json().id as string
      const forced = await upload(h, p.owner, standardParts(p.siteCode, 'long', SECOND, MAPPING, { force: 'true' }))
      assert.equal(forced.statusCode, 201, forced.body)
      const b = forced.json().id as string
      assert.equal(forced.json().replaced, 2)
      assert.deepEqual(forced.json().collisionReport.first, [
        {
          instanceId: 'ins_pump',
          tagKey: 'p',
          ts: '2024-05-01T00:01:00.000Z',
          resolution: 'replacedStored',
          kept: { batchId: b, value: 20, text: null, quality: 'bad' },
          discarded: { batchId: a, value: 2, text: null, quality: 'good' },
        },
        {
          instanceId: 'ins_pump',
          tagKey: 'p',
          ts: '2024-05-01T00:02:00.000Z',
          resolution: 'replacedStored',
          kept: { batchId: b, value: null, text: 'Stopped', quality: 'good' },
          discarded: { batchId: a, value: 3, text: null, quality: 'uncertain' },
        },
      ])
      assert.deepEqual(
        (await series(h, p, 'instanceId=ins_pump&tag=p')).samples.map((s) => s.value ?? s.text),
        [1, 20, 'Stopped', 40],
      )
    })

    it("with force the batches whose values were replaced change too (updated_at), so the fleet link's outbox records their rows again; a batch not replaced does not", async () => {
      const h = shared()
      const p = await plant(h)
      const a = (await upload(h, p.owner, standardParts(p.siteCode, 'long', FIRST, MAPPING))).json().id as string
      const apart = 'timestamp,tag,value,quality\n2024-06-01T00:00:00Z,A,1,Good\n'
      const c = (await upload(h, p.owner, standardParts(p.siteCode, 'long', apart, MAPPING))).json().id as string
      const recorded = async (id: string) =>
        Number(
          (
            await h.handle.db
              .selectFrom('link_outbox')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('org_id', '=', p.owner.org.id)
              .where('table_name', '=', 'historian_batches')
              .where('row_key', '=', JSON.stringify([id]))
              .where('op', '=', 'upsert')
              .executeTakeFirstOrThrow()
          ).n,
        )
      const before = { a: await recorded(a), c: await recorded(c) }
      h.clock.advance(60_000)
      const forced = await upload(h, p.owner, standardParts(p.siteCode, 'long', SECOND, MAPPING, { force: 'true' }))
      assert.equal(forced.statusCode, 201, forced.body)
      assert.equal(forced.json().replaced, 2)
      assert.deepEqual({ a: await recorded(a), c: await recorded(c) }, { a: before.a + 1, c: before.c })
      const view = async (id: string) => (await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches/${id}` })).json()
      assert.equal((await view(a)).updatedAt, new Date(h.clock.now()).toISOString())
      assert.notEqual((await view(c)).updatedAt, new Date(h.clock.now()).toISOString())
    })

    it(`every collision is counted but only the first ${MAX_COLLISIONS_LISTED} are listed, in file order`, async () => {
      const h = shared()
      const p = await plant(h)
      const n = MAX_COLLISIONS_LISTED + 50
      const rows = (v: number) =>
        `timestamp,tag,value\n${Array.from({ length: n }, (_, i) => `${new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString()},A,${v + i}`).join('\n')}\n`
      assert.equal((await upload(h, p.owner, standardParts(p.siteCode, 'long', rows(0), MAPPING))).statusCode, 201)
      const again = await upload(h, p.owner, standardParts(p.siteCode, 'long', rows(100_000), MAPPING))
      assert.equal(again.statusCode, 201, again.body)
      assert.equal(again.json().collisions, n)
      assert.equal(again.json().samplesStored, 0)
      assert.equal(again.json().collisionReport.count, n)
      assert.equal(again.json().collisionReport.listed, MAX_COLLISIONS_LISTED)
      const last = await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches/${again.json().id}/collisions?limit=1000` })
      const items = last.json().items as Array<{ ts: string; kept: { value: number }; discarded: { value: number } }>
      assert.equal(items.length, MAX_COLLISIONS_LISTED)
      assert.equal(last.json().nextCursor, null)
      assert.deepEqual([items[0]!.kept.value, items[0]!.discarded.value], [0, 100_000])
      assert.deepEqual([items.at(-1)!.kept.value, items.at(-1)!.discarded.value], [MAX_COLLISIONS_LISTED - 1, 100_000 + MAX_COLLISIONS_LISTED - 1])
      assert.equal(await sampleCount(h, p.owner.org.id), n)
    })

    it('a file of several write transactions: collisions in two series all counted and listed in file order across both', async () => {
      const h = shared()
      const p = await plant(h)
      const mapping = 'historian_tag,instance_id,tag_key\nA,ins_pump,p\nB,ins_pump,q\n'
      // Sample i: tag A (even i) or B (odd i), at second ⌊i/2⌋, value offset + i.
      const start = Date.UTC(2024, 0, 1)
      const at = (i: number) => new Date(start + Math.floor(i / 2) * 1000).toISOString()
      const line = (i: number, offset: number) => `${at(i)},${i % 2 === 0 ? 'A' : 'B'},${offset + i}\n`
      const total = 3 * FLUSH_SAMPLES
      // The first batch holds both series at every 500th second: collisions all through the second file.
      const stored = Array.from({ length: total }, (_, i) => i).filter((i) => Math.floor(i / 2) % 500 === 0)
      const first = await upload(h, p.owner, standardParts(p.siteCode, 'long', `timestamp,tag,value\n${stored.map((i) => line(i, 0)).join('')}`, mapping))
      assert.equal(first.statusCode, 201, first.body)
      let file = 'timestamp,tag,value\n'
      for (let i = 0; i < total; i++) file += line(i, 1_000_000)
      const second = await upload(h, p.owner, standardParts(p.siteCode, 'long', file, mapping), { pieceBytes: 64 * 1024 })
      assert.equal(second.statusCode, 201, second.body)
      const batch = second.json()
      assert.equal(batch.collisions, stored.length)
      assert.equal(batch.samplesStored, total - stored.length)
      const listed = await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches/${batch.id}/collisions?limit=1000` })
      const items = listed.json().items as Array<{ tagKey: string; ts: string; kept: { value: number }; discarded: { value: number } }>
      assert.deepEqual(
        items.map((c) => [c.tagKey, c.ts, c.kept.value, c.discarded.value]),
        stored.map((i) => [i % 2 === 0 ? 'p' : 'q', at(i), i, 1_000_000 + i]),
      )
      assert.equal(await sampleCount(h, p.owner.org.id), total)
      if (dialect === 'postgres') {
        // The case this test is for: PostgreSQL writes a chunk's series on two connections at once (from the first
        // write after the second connection came), so the two samples of a timestamp were committed by two
        // transactions.
        const { rows: split } = await sql<{ n: number }>`select count(*) as n from (
          select ts from historian_points where org_id = ${p.owner.org.id} and batch_id = ${batch.id}
          group by ts having count(distinct xmin::text) = 2) t`.execute(h.handle.db)
        assert.ok(Number(split[0]!.n) > 0, 'some writes were split between two connections')
      }
    })

    it("a bad cursor is a 400 and another organisation's batch the uniform 404", async () => {
      const h = shared()
      const p = await plant(h)
      const id = (await upload(h, p.owner, standardParts(p.siteCode, 'long', FIRST, MAPPING))).json().id as string
      const bad = await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches/${id}/collisions?cursor=nope` })
      assert.equal(bad.statusCode, 400)
      const stranger = await h.orgWithKey('owner')
      const foreign = await h.inject({ org: stranger.org, apiKey: stranger.key }, { method: 'GET', url: `/api/historian/import-batches/${id}/collisions` })
      assert.equal(foreign.statusCode, 404)
      assert.equal(foreign.json().code, 'NotFound')
    })
  })
}
