import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { MAX_UNMAPPED_TAGS_LISTED } from './service/batch-record.ts'
import { assertNothingStored, batchCount, fixture, mappingFor, plant, sampleCount, series, standardParts, upload, sharedHarness } from './test-setup.ts'

/** Buckets with their time-weighted average and standard deviation rounded to 4 decimals. */
const rounded = (buckets: Array<Record<string, unknown>>) =>
  buckets.map((b) => {
    const r = (v: unknown) => (v === null ? null : Math.round(Number(v) * 1e4) / 1e4)
    return { ...b, timeWeightedAverage: r(b.timeWeightedAverage), stdDev: r(b.stdDev) }
  })

for (const dialect of testDialects()) {
  describe(`${dialect}: historian import`, () => {
    const shared = sharedHarness(dialect)
    it('the mapping scale multiplies numbers, unit is recorded, unmapped tags are rejected rows with a reason', async () => {
      const h = shared()
      const p = await plant(h)
      const trend = 'timestamp,tag,value\n2024-01-01T00:00:00Z,A,10\n2024-01-01T00:00:00Z,B,5\n2024-01-01T00:01:00Z,A,Running\n'
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, 'historian_tag,instance_id,tag_key,unit,scale\nA,ins_pump,flow,m3/h,0.5\n'))
      assert.equal(res.statusCode, 201, res.body)
      const batch = res.json()
      assert.equal(batch.samplesStored, 2)
      assert.equal(batch.rowsRejected, 1)
      assert.deepEqual(batch.unmappedTags, [{ tag: 'B', rows: 1 }])
      assert.equal(batch.rejections.first[0].line, 3)
      assert.equal(batch.tags[0].unit, 'm3/h')
      const read = await series(h, p, 'instanceId=ins_pump&tag=flow')
      assert.deepEqual(
        read.samples.map((s) => [s.value, s.text]),
        [
          [5, null],
          [null, 'Running'],
        ],
      )
    })

    it('unmapped tags: the first 1 000 are listed in file order with their rows; rows of further ones are rejected and counted, their names not kept', async () => {
      const h = shared()
      const p = await plant(h)
      const extra = 5
      const lines = ['timestamp,tag,value', '2024-01-01T00:00:00Z,A,1']
      for (let i = 0; i < MAX_UNMAPPED_TAGS_LISTED + extra; i++) lines.push(`2024-01-01T00:00:00Z,U${i},${i}`)
      lines.push('2024-01-01T00:01:00Z,U0,1', `2024-01-01T00:01:00Z,U${MAX_UNMAPPED_TAGS_LISTED},1`, '2024-01-01T00:01:00Z,A,2')
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', `${lines.join('\n')}\n`, 'historian_tag,instance_id,tag_key\nA,ins_pump,flow\n'))
      assert.equal(res.statusCode, 201, res.body)
      const batch = res.json()
      assert.equal(batch.samplesStored, 2)
      assert.equal(batch.rowsRejected, MAX_UNMAPPED_TAGS_LISTED + extra + 2)
      assert.equal(batch.rejections.count, MAX_UNMAPPED_TAGS_LISTED + extra + 2)
      assert.equal(batch.unmappedTags.length, MAX_UNMAPPED_TAGS_LISTED)
      assert.deepEqual(batch.unmappedTags.slice(0, 2), [
        { tag: 'U0', rows: 2 },
        { tag: 'U1', rows: 1 },
      ])
      assert.deepEqual(batch.unmappedTags.at(-1), { tag: `U${MAX_UNMAPPED_TAGS_LISTED - 1}`, rows: 1 })
      const read = await series(h, p, 'instanceId=ins_pump&tag=flow')
      assert.deepEqual(
        read.samples.map((s) => s.value),
        [1, 2],
      )
    })

    it('local times follow the timezone part across both daylight-saving changes; the repeated hour is resolved by row order', async () => {
      const h = shared()
      const p = await plant(h, { timeZone: 'UTC' })
      const res = await upload(
        h,
        p.owner,
        standardParts(p.siteCode, 'long', fixture('long-dst-paris.csv'), 'historian_tag;instance_id;tag_key\nT1;ins_pump;level\nT2;ins_pump;other\n', {
          timezone: 'Europe/Paris',
        }),
      )
      assert.equal(res.statusCode, 201, res.body)
      assert.equal(res.json().rowsRejected, 1) // 02:30 on 31 March 2024 does not exist in Paris
      assert.equal(res.json().rejections.first[0].line, 10)
      const read = await series(h, p, 'instanceId=ins_pump&tag=level')
      // By hand: CEST is UTC+2 until 03:00 CEST on 27 Oct 2024, then CET UTC+1; 02:00 and 02:30 occur twice.
      assert.deepEqual(
        read.samples.map((s) => [s.ts, s.value]),
        [
          ['2024-03-31T01:00:00.000Z', 10],
          ['2024-10-26T23:30:00.000Z', 1],
          ['2024-10-27T00:00:00.000Z', 2],
          ['2024-10-27T00:30:00.000Z', 3],
          ['2024-10-27T01:00:00.000Z', 4],
          ['2024-10-27T01:30:00.000Z', 5],
          ['2024-10-27T02:00:00.000Z', 6],
        ],
      )
    })

    it("without a timezone part the site's time zone reads local times", async () => {
      const h = shared()
      const p = await plant(h, { timeZone: 'Australia/Sydney' })
      const res = await upload(
        h,
        p.owner,
        standardParts(p.siteCode, 'long', 'timestamp,tag,value\n2024-07-01 10:00:00,A,1\n', 'historian_tag,instance_id,tag_key\nA,ins_pump,x\n'),
      )
      assert.equal(res.statusCode, 201, res.body)
      assert.equal(res.json().timezone, 'Australia/Sydney')
      assert.equal((await series(h, p, 'instanceId=ins_pump&tag=x')).samples[0]!.ts, '2024-07-01T00:00:00.000Z')
    })

    it('buckets give min, max, mean, first, last, count, standard deviation and time-weighted average of the numeric samples, computed by hand', async () => {
      const h = shared()
      const p = await plant(h)
      const trend = [
        'timestamp,tag,value',
        '2024-05-01T10:00:00Z,A,4',
        '2024-05-01T10:20:00Z,A,1',
        '2024-05-01T10:40:00Z,A,7',
        '2024-05-01T10:50:00Z,A,Stopped',
        '2024-05-01T11:05:00Z,A,-2',
        '2024-05-01T11:59:59.999Z,A,3',
        '2024-05-01T13:00:00Z,A,10',
      ].join('\n')
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'))
      assert.equal(res.statusCode, 201, res.body)
      // The time-weighted averages (4 decimals) integrate the line through the samples (the text state is left out)
      // over the bucket. 10–11: 10:00 → 4, 10:20 → 1, 10:40 → 7, and at 11:00 the line from 7 (10:40) to −2 (11:05),
      // −0.2: (50 + 80 + 68) / 60 = 3.3. 11–12: −0.2, −2 (11:05), 3 (11:59:59.999), ≈3 at 12:00:
      // (−330 000 + 1 649 999.5 + 3) ms / 3 600 000 ms ≈ 0.3667. From 13:00 the last value, 10, is held.
      const read = await series(h, p, 'instanceId=ins_pump&tag=p&bucket=1h&from=2024-05-01T00:00:00Z&to=2024-05-02T00:00:00Z')
      assert.deepEqual(rounded(read.buckets), [
        { start: '2024-05-01T10:00:00.000Z', min: 1, max: 7, mean: 4, timeWeightedAverage: 3.3, stdDev: 3, first: 4, last: 7, count: 3 },
        { start: '2024-05-01T11:00:00.000Z', min: -2, max: 3, mean: 0.5, timeWeightedAverage: 0.3667, stdDev: 3.5355, first: -2, last: 3, count: 2 },
        { start: '2024-05-01T13:00:00.000Z', min: 10, max: 10, mean: 10, timeWeightedAverage: 10, stdDev: null, first: 10, last: 10, count: 1 },
      ])
      const narrow = await series(h, p, 'instanceId=ins_pump&tag=p&bucket=30m&from=2024-05-01T10:30:00Z&to=2024-05-01T11:30:00Z&limit=1')
      // 10:30 → 4 (between 1 and 7), 10:40 → 7, 11:00 → −0.2: (55 + 68) / 30 = 4.1.
      assert.deepEqual(rounded(narrow.buckets), [
        { start: '2024-05-01T10:30:00.000Z', min: 7, max: 7, mean: 7, timeWeightedAverage: 4.1, stdDev: null, first: 7, last: 7, count: 1 },
      ])
      assert.notEqual(narrow.nextCursor, null)
      const next = await series(
        h,
        p,
        `instanceId=ins_pump&tag=p&bucket=30m&from=2024-05-01T10:30:00Z&to=2024-05-01T11:30:00Z&limit=1&cursor=${narrow.nextCursor}`,
      )
      // Up to `to`, 11:30: −0.2, −2 (11:05), then ≈0.2727 at 11:30 on the line to 3: (−330 000 − 1 295 454.3) / 1 800 000 ≈ −0.903.
      assert.deepEqual(rounded(next.buckets), [
        { start: '2024-05-01T11:00:00.000Z', min: -2, max: -2, mean: -2, timeWeightedAverage: -0.903, stdDev: null, first: -2, last: -2, count: 1 },
      ])
      assert.equal(next.nextCursor, null)
    })

    it('raw series pages by timestamp and honours [from, to)', async () => {
      const h = shared()
      const p = await plant(h)
      const rows = Array.from({ length: 5 }, (_, i) => `2024-05-01T00:0${i}:00Z,A,${i}`)
      await upload(
        h,
        p.owner,
        standardParts(p.siteCode, 'long', `timestamp,tag,value\n${rows.join('\n')}\n`, 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'),
      )
      const first = await series(h, p, 'instanceId=ins_pump&tag=p&from=2024-05-01T00:01:00Z&to=2024-05-01T00:04:00Z&limit=2')
      assert.deepEqual(
        first.samples.map((s) => s.value),
        [1, 2],
      )
      const second = await series(h, p, `instanceId=ins_pump&tag=p&from=2024-05-01T00:01:00Z&to=2024-05-01T00:04:00Z&limit=2&cursor=${first.nextCursor}`)
      assert.deepEqual(
        second.samples.map((s) => s.value),
        [3],
      )
      assert.equal(second.nextCursor, null)
    })

    it('the same two files again are refused with 409 naming the earlier batch; nothing new is stored', async () => {
      const h = shared()
      const p = await plant(h)
      const { csv } = await mappingFor('long.csv', 'long')
      const first = await upload(h, p.owner, standardParts(p.siteCode, 'long', fixture('long.csv'), csv))
      assert.equal(first.statusCode, 201)
      const before = await sampleCount(h, p.owner.org.id)
      const again = await upload(h, p.owner, standardParts(p.siteCode, 'long', fixture('long.csv'), csv))
      assert.equal(again.statusCode, 409, again.body)
      assert.equal(again.json().code, 'Conflict')
      assert.equal(again.json().earlierBatchId, first.json().id)
      assert.equal(await sampleCount(h, p.owner.org.id), before)
      assert.equal(await batchCount(h, p.owner.org.id), 1)
    })

    it('force=true imports the same files again and records it; a colliding later file replaces values only with force', async () => {
      const h = shared()
      const p = await plant(h)
      const mapping = 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'
      const a = 'timestamp,tag,value\n2024-05-01T00:00:00Z,A,1\n2024-05-01T00:01:00Z,A,2\n'
      const b = 'timestamp,tag,value\n2024-05-01T00:01:00Z,A,20\n2024-05-01T00:02:00Z,A,30\n'
      const first = await upload(h, p.owner, standardParts(p.siteCode, 'long', a, mapping))
      assert.equal(first.statusCode, 201)
      const plain = await upload(h, p.owner, standardParts(p.siteCode, 'long', b, mapping))
      assert.equal(plain.statusCode, 201, plain.body)
      assert.equal(plain.json().collisions, 1)
      assert.equal(plain.json().samplesStored, 1)
      assert.deepEqual(
        (await series(h, p, 'instanceId=ins_pump&tag=p')).samples.map((s) => s.value),
        [1, 2, 30],
      )
      // Deleting the plain batch then forcing the same file: latest value wins.
      assert.equal((await h.inject(p.owner, { method: 'DELETE', url: `/api/historian/import-batches/${plain.json().id}` })).statusCode, 204)
      const forced = await upload(h, p.owner, standardParts(p.siteCode, 'long', b, mapping, { force: 'true' }))
      assert.equal(forced.statusCode, 201, forced.body)
      assert.equal(forced.json().isForced, true)
      assert.equal(forced.json().replaced, 1)
      assert.equal(forced.json().samplesStored, 2)
      assert.deepEqual(
        (await series(h, p, 'instanceId=ins_pump&tag=p')).samples.map((s) => s.value),
        [1, 20, 30],
      )
      const twin = await upload(h, p.owner, standardParts(p.siteCode, 'long', a, mapping, { force: 'true' }))
      assert.equal(twin.statusCode, 201)
      assert.equal(twin.json().forcedOver, first.json().id)
      assert.deepEqual(
        (await series(h, p, 'instanceId=ins_pump&tag=p')).samples.map((s) => s.value),
        [1, 2, 30],
      )
    })

    it('a later row of the same file at the same tag and timestamp wins', async () => {
      const h = shared()
      const p = await plant(h)
      const res = await upload(
        h,
        p.owner,
        standardParts(
          p.siteCode,
          'long',
          'timestamp,tag,value\n2024-05-01T00:00:00Z,A,1\n2024-05-01T00:00:00Z,A,2\n',
          'historian_tag,instance_id,tag_key\nA,ins_pump,p\n',
        ),
      )
      assert.equal(res.statusCode, 201)
      assert.equal(res.json().samplesStored, 1)
      assert.deepEqual(
        (await series(h, p, 'instanceId=ins_pump&tag=p')).samples.map((s) => s.value),
        [2],
      )
    })

    it('the parts may come in any order: a trend file sent first waits on disk and is imported', async () => {
      const h = shared()
      const p = await plant(h)
      const parts = standardParts(
        p.siteCode,
        'long',
        'timestamp,tag,value\n2024-05-01T00:00:00Z,A,1\n',
        'historian_tag,instance_id,tag_key\nA,ins_pump,p\n',
      ).reverse()
      const res = await upload(h, p.owner, parts)
      assert.equal(res.statusCode, 201, res.body)
      assert.equal(res.json().samplesStored, 1)
    })

    it('members read batches and series but cannot import or delete (403)', async () => {
      const h = shared()
      const p = await plant(h)
      const mapping = 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'
      const refused = await upload(h, p.member, standardParts(p.siteCode, 'long', 'timestamp,tag,value\n2024-05-01T00:00:00Z,A,1\n', mapping))
      assert.equal(refused.statusCode, 403)
      await assertNothingStored(h, p)
      const done = await upload(h, p.owner, standardParts(p.siteCode, 'long', 'timestamp,tag,value\n2024-05-01T00:00:00Z,A,1\n', mapping))
      const id = done.json().id as string
      assert.equal((await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches/${id}` })).statusCode, 200)
      assert.equal((await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches?siteId=${p.siteCode}` })).json().items.length, 1)
      assert.equal((await h.inject(p.member, { method: 'DELETE', url: `/api/historian/import-batches/${id}` })).statusCode, 403)
      assert.equal(await sampleCount(h, p.owner.org.id), 1)
    })

    it("another organisation's batch, rejections and series read as the uniform 404", async () => {
      const h = shared()
      const p = await plant(h)
      const stranger = await h.orgWithKey('owner')
      const done = await upload(
        h,
        p.owner,
        standardParts(p.siteCode, 'long', 'timestamp,tag,value\n2024-05-01T00:00:00Z,A,1\n', 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'),
      )
      const id = done.json().id as string
      const as = { org: stranger.org, apiKey: stranger.key }
      for (const url of [
        `/api/historian/import-batches/${id}`,
        `/api/historian/import-batches/${id}/rejections`,
        `/api/historian/import-batches?siteId=${p.siteCode}`,
        `/api/sites/${p.siteCode}/historian/series?instanceId=ins_pump&tag=p`,
      ]) {
        const res = await h.inject(as, { method: 'GET', url })
        assert.equal(res.statusCode, 404, url)
        assert.equal(res.json().code, 'NotFound')
      }
      assert.equal((await h.inject(as, { method: 'DELETE', url: `/api/historian/import-batches/${id}` })).statusCode, 404)
      assert.equal(await sampleCount(h, p.owner.org.id), 1)
    })

    it('the rejection report downloads as JSON and as CSV', async () => {
      const h = shared()
      const p = await plant(h)
      const { csv } = await mappingFor('long.csv', 'long')
      const done = await upload(h, p.owner, standardParts(p.siteCode, 'long', fixture('long.csv'), csv, { maxRejections: '2' }))
      const id = done.json().id as string
      const json = await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches/${id}/rejections` })
      assert.equal(json.statusCode, 200)
      assert.equal(json.json().rejections.length, 2)
      assert.equal(json.json().count, done.json().rowsRejected)
      const csvRes = await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches/${id}/rejections?as=csv` })
      assert.equal(csvRes.statusCode, 200)
      assert.match(csvRes.headers['content-type'] as string, /^text\/csv/)
      assert.equal(csvRes.body.split('\r\n')[0], 'line,column,reason')
      assert.equal(csvRes.body.trim().split('\r\n').length, 3)
    })

    it("a listed batch is the batch's summary: the same fields, with the lists that grow with the file counted, not listed", async () => {
      const h = shared()
      const p = await plant(h)
      const trend = 'timestamp,tag,value\n2024-01-01T00:00:00Z,A,1\n2024-01-01T00:00:00Z,B,2\n2024-01-01T00:00:00Z,C,3\n2024-01-01T00:00:00Z,D,4\n'
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, 'historian_tag,instance_id,tag_key\nA,ins_pump,a\nB,ins_pump,b\n'))
      assert.equal(res.statusCode, 201, res.body)
      const batch = (await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches/${res.json().id}` })).json()
      const listed = (await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches?siteId=${p.siteCode}` })).json().items[0]
      const { tags, unmappedTags, rejections, collisionReport, ...common } = batch
      assert.deepEqual(listed, {
        ...common,
        rejections: { count: rejections.count, reportUrl: rejections.reportUrl },
        collisionReport: { count: collisionReport.count, listed: collisionReport.listed, reportUrl: collisionReport.reportUrl },
        unmappedTagCount: 2,
        tagCount: 2,
      })
      assert.equal(tags.length, 2)
      assert.deepEqual(
        unmappedTags.map((u: { tag: string }) => u.tag),
        ['C', 'D'],
      )
      assert.equal(rejections.count, 2)
    })

    it('batches list newest first in pages; deleting one removes its samples and the site preview counts them', async () => {
      const h = shared()
      const p = await plant(h)
      const mapping = 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'
      const ids: string[] = []
      for (let i = 0; i < 3; i++) {
        const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', `timestamp,tag,value\n2024-05-0${i + 1}T00:00:00Z,A,${i}\n`, mapping))
        ids.push(res.json().id as string)
        h.clock.advance(1000) // ids are time-ordered by the injected clock
      }
      const page1 = (await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches?siteId=${p.siteCode}&limit=2` })).json()
      assert.deepEqual(
        page1.items.map((b: { id: string }) => b.id),
        [ids[2], ids[1]],
      )
      const page2 = (
        await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches?siteId=${p.siteCode}&limit=2&cursor=${page1.nextCursor}` })
      ).json()
      assert.deepEqual(
        page2.items.map((b: { id: string }) => b.id),
        [ids[0]],
      )
      assert.equal(page2.nextCursor, null)
      const preview = await h.inject(p.owner, { method: 'DELETE', url: `/api/sites/${p.siteCode}` })
      assert.equal(preview.statusCode, 409)
      assert.equal(preview.json().wouldDelete.historianBatches, 3)
      assert.equal(preview.json().wouldDelete.historianSamples, 3)
      assert.equal((await h.inject(p.owner, { method: 'DELETE', url: `/api/historian/import-batches/${ids[1]}` })).statusCode, 204)
      assert.equal((await h.inject(p.owner, { method: 'GET', url: `/api/historian/import-batches/${ids[1]}` })).statusCode, 404)
      assert.deepEqual(
        (await series(h, p, 'instanceId=ins_pump&tag=p')).samples.map((s) => s.value),
        [0, 2],
      )
    })
  })
}
