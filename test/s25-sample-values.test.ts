// Session 25: a historian value any path stored, however large, was later summed by a read. Live samples of 1e155 and
// 3e155 made PostgreSQL's average overflow — `value out of range`, a 500 on every aggregate read of the tag — and
// SQLite's answer hold Infinity (written as null where a number is declared); an imported 1e300 with a mapping's scale
// of 1e10 was stored as Infinity. A sample's value now lies within ±1e100 on every path that stores one: the import
// (after `scale`), the live push (JSON and lines), the fleet link's chunks and a tenant package; past it the sample is
// refused naming its value and the rule.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { OUT_OF_RANGE_TEXT, up as migrateValuesInRange } from '../src/db/migrations/2640-historian-values-in-range.ts'
import { findSampleProblems } from '../src/modules/fleet/historian-chunks/wire.ts'
import { livePlant, sampleCount, sharedHarness, standardParts, upload } from '../src/modules/historian/test-setup.ts'
import { EXPORTED_TABLES } from '../src/modules/tenant-transfer/tables.ts'
import { testDialects } from './harness.ts'

const RULE = /is not a number from -1e100 to 1e100/
const HOUR = 3_600_000

interface Bucket {
  min: number
  max: number
  mean: number
  timeWeightedAverage: number | null
  stdDev: number | null
  count: number
}

for (const dialect of testDialects()) {
  describe(`${dialect}: a historian value lies within ±1e100 on every path that stores it`, () => {
    const shared = sharedHarness(dialect)

    it('live samples past it are refused naming the value (JSON and lines); those at it are stored and every read of them answers numbers', async () => {
      const h = shared()
      const now = Date.UTC(2026, 0, 10, 12)
      const p = await livePlant(h, now)
      const t0 = now - HOUR
      const push = (samples: unknown[], key: string) =>
        h.inject(p.owner, { method: 'POST', url: `/api/sites/${p.siteCode}/historian/samples?batchKey=${key}`, payload: { samples } })
      const past = [1.0000000000000002e100, -1e101, 1e155, Number.MAX_VALUE]
      const at = [1e100, 1e100, -1e100, 1e100]
      const res = await push(
        [...past, ...at].map((value, i) => ({ instanceId: 'ins_pump', tagKey: 'speed', ts: t0 + i * 60_000, value })),
        'k1',
      )
      assert.equal(res.statusCode, 200, res.body)
      const answer = res.json() as { stored: number; refusals: Array<{ index: number; reason: string }> }
      assert.equal(answer.stored, at.length)
      assert.deepEqual(
        answer.refusals.map((r) => r.index),
        [0, 1, 2, 3],
      )
      for (const r of answer.refusals) assert.match(r.reason, RULE)
      const lines = await h.inject(p.owner, {
        method: 'POST',
        url: `/api/sites/${p.siteCode}/historian/samples?batchKey=k2`,
        headers: { 'content-type': 'text/plain' },
        payload: `ins_pump,speed,${t0 + 30_000},2e100\nins_pump,speed,${t0 + 90_000},-1e100\n`,
      })
      assert.equal(lines.statusCode, 200, lines.body)
      assert.deepEqual((lines.json() as { stored: number }).stored, 1)
      assert.match((lines.json() as { refusals: Array<{ reason: string }> }).refusals[0]!.reason, RULE)

      const from = new Date(t0 - HOUR).toISOString()
      const to = new Date(now).toISOString()
      const series = (query: string) =>
        h.inject(p.owner, {
          url: `/api/sites/${p.siteCode}/historian/series?instanceId=ins_pump&tag=speed&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&${query}`,
        })
      const aggregate = await series('bucket=1d')
      assert.equal(aggregate.statusCode, 200, aggregate.body)
      const [bucket] = (aggregate.json() as { buckets: Bucket[] }).buckets
      assert.equal(bucket!.count, 5)
      for (const field of ['min', 'max', 'mean', 'timeWeightedAverage', 'stdDev'] as const)
        assert.ok(Number.isFinite(bucket![field]), `${field}: ${JSON.stringify(bucket)}`)
      assert.deepEqual([bucket!.min, bucket!.max], [-1e100, 1e100])
      for (const query of [
        'mode=interpolated&interval=10m',
        'mode=plot&width=10',
        `mode=at&at=${encodeURIComponent(new Date(t0 + 150_000).toISOString())}`,
        'format=csv&bucket=1h',
      ])
        assert.equal((await series(query)).statusCode, 200, query)
    })

    it('a value past it (or a subnormal) stored by an earlier version becomes the text state `value out of range` (migration 2640); the aggregate read then answers numbers', async () => {
      const h = shared()
      const now = Date.UTC(2026, 0, 11, 12)
      const p = await livePlant(h, now)
      const samples = [1, 2, 3, 4, 5].map((v, i) => ({ instanceId: 'ins_motor', tagKey: 'speed', ts: now - HOUR + i * 60_000, value: v }))
      const pushed = await h.inject(p.owner, { method: 'POST', url: `/api/sites/${p.siteCode}/historian/samples?batchKey=old`, payload: { samples } })
      assert.equal((pushed.json() as { stored: number }).stored, 5, pushed.body)
      const points = () =>
        h.handle.db
          .selectFrom('historian_points')
          .select(['ts', 'value', 'text', 'quality'])
          .where('org_id', '=', p.owner.org.id)
          .where('ts', '>=', now - HOUR)
          .orderBy('ts')
          .execute()
      const stored = await points()
      // As an earlier version could store them: past the bound, and a scale's overflow.
      for (const [i, value] of [1e300, Number.POSITIVE_INFINITY, -1e101, 5e-324].entries())
        await h.handle.db.updateTable('historian_points').set({ value }).where('org_id', '=', p.owner.org.id).where('ts', '=', Number(stored[i]!.ts)).execute()
      await migrateValuesInRange(h.handle.db as never)
      assert.deepEqual(
        (await points()).map((r) => [r.value === null ? null : Number(r.value), r.text, Number(r.quality)]),
        [
          [null, OUT_OF_RANGE_TEXT, 192],
          [null, OUT_OF_RANGE_TEXT, 192],
          [null, OUT_OF_RANGE_TEXT, 192],
          [null, OUT_OF_RANGE_TEXT, 192],
          [5, null, 192],
        ],
      )
      const from = encodeURIComponent(new Date(now - 2 * HOUR).toISOString())
      const read = await h.inject(p.owner, {
        url: `/api/sites/${p.siteCode}/historian/series?instanceId=ins_motor&tag=speed&from=${from}&to=${encodeURIComponent(new Date(now).toISOString())}&bucket=1d`,
      })
      assert.equal(read.statusCode, 200, read.body)
      const [bucket] = (read.json() as { buckets: Bucket[] }).buckets
      assert.deepEqual([bucket!.count, bucket!.mean], [1, 5])
    })

    it("an imported value past it, as read or after the mapping's scale, is a rejected row naming it; the rest is stored", async () => {
      const h = shared()
      const { owner, siteCode } = await livePlant(h, Date.UTC(2026, 0, 10, 12))
      const before = await sampleCount(h, owner.org.id)
      const mapping = 'historian_tag,instance_id,tag_key,unit,scale\nT1,ins_pump,speed,rpm,1\nT2,ins_motor,speed,rpm,1e10\n'
      const trend =
        'Timestamp,TagName,Value,Quality\n' +
        '2026-01-10 10:00:00,T1,1e300,100\n2026-01-10 10:00:01,T1,1e100,100\n' +
        '2026-01-10 10:00:00,T2,1e95,100\n2026-01-10 10:00:01,T2,1e89,100\n'
      const res = await upload(h, owner, standardParts(siteCode, 'long', trend, mapping))
      assert.equal(res.statusCode, 201, res.body)
      const batch = res.json() as { id: string; samplesStored: number; rowsRejected: number }
      assert.deepEqual([batch.samplesStored, batch.rowsRejected], [2, 2])
      assert.equal(await sampleCount(h, owner.org.id), before + 2)
      const report = await h.inject(owner, { url: `/api/historian/import-batches/${batch.id}/rejections` })
      const rejections = (report.json() as { rejections: Array<{ line: number; reason: string }> }).rejections
      assert.deepEqual(
        rejections.map((r) => [r.line, r.reason]),
        [
          [2, 'value 1e+300 is not a number from -1e100 to 1e100'],
          [4, 'value 1e+95 × scale 10000000000 is not a number from -1e100 to 1e100'],
        ],
      )
    })
  })
}

describe('a historian value past ±1e100 arriving without a request', () => {
  it("a fleet link chunk's sample names it (/samples/i/3); a tenant package's historian_samples row breaks its rule (/value)", () => {
    const ok = ['ins_pump', 'speed', 1, 1e100, null, 192]
    assert.deepEqual(findSampleProblems([ok]), [])
    const problems = findSampleProblems([ok, ['ins_pump', 'speed', 2, -2e100, null, 192]])
    assert.deepEqual(
      problems.map((p) => [p.pointer, p.message]),
      [['/samples/1/3', 'must be a number from -1e100 to 1e100 or null']],
    )
    const samples = EXPORTED_TABLES.find((t) => t.name === 'historian_samples')!
    const row = { instance_id: 'ins_pump', tag_key: 'speed', value: 1e100 }
    assert.equal(samples.rules!(row, {}), undefined)
    assert.equal(samples.rules!({ ...row, value: null }, {}), undefined)
    assert.deepEqual(samples.rules!({ ...row, value: -1e101 }, {}), { pointer: '/value', message: 'must be a number from -1e100 to 1e100' })
  })
})
