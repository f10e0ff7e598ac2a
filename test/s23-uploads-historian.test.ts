// Session 23, hostile uploads: the historian import under numbers past the largest double, timestamps that leave the
// years an ISO 8601 answer writes once in UTC, and a header naming a column twice. Each is refused with its line (or
// the file) and the rule; nothing of a refused row or file is stored, and the batch is answered (never a 500).
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from './harness.ts'
import { batchCount, plant, sampleCount, sharedHarness, standardParts, upload } from '../src/modules/historian/test-setup.ts'

const MAPPING = 'historian_tag,instance_id,tag_key\nT1,ins_pump,p\n'
const HEADER = 'Timestamp,TagName,Value,Quality\n'

interface Rejection {
  line: number
  reason: string
}

for (const dialect of testDialects()) {
  describe(`${dialect}: hostile historian uploads (session 23)`, () => {
    const shared = sharedHarness(dialect)

    it('a value past the largest double (1e400, 400 digits, -1e400) is a rejected row naming it, never a stored Infinity', async () => {
      const h = shared()
      const p = await plant(h)
      const trend = `${HEADER}2024-01-01 00:00:00,T1,1e400,100\n2024-01-01 00:00:01,T1,${'9'.repeat(400)},100\n2024-01-01 00:00:02,T1,-1e400,100\n2024-01-01 00:00:03,T1,12.5,100\n`
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, MAPPING))
      assert.equal(res.statusCode, 201, res.body)
      const batch = res.json() as { id: string; samplesStored: number; rowsRejected: number }
      assert.deepEqual([batch.samplesStored, batch.rowsRejected], [1, 3])
      assert.equal(await sampleCount(h, p.owner.org.id), 1)
      const report = await h.inject(p.owner, { method: 'GET', url: `/api/historian/import-batches/${batch.id}/rejections` })
      const rejections = (report.json() as { rejections: Rejection[] }).rejections
      assert.deepEqual(
        rejections.map((r) => r.line),
        [2, 3, 4],
      )
      for (const r of rejections) assert.match(r.reason, /is past the largest number a sample holds/)
    })

    it('a local time that leaves 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z once in UTC is a rejected row; the batch is answered and read back', async () => {
      const h = shared()
      const p = await plant(h)
      // Paris's offset in year 0000 is its local mean time (+00:09:21): midnight is still year -1 in UTC. Los Angeles
      // (-08:00) pushes the last evening of 9999 into year 10000.
      const cases: Array<[string, string]> = [
        ['Europe/Paris', '0000-01-01 00:00:00'],
        ['America/Los_Angeles', '9999-12-31 23:00:00'],
      ]
      for (const [timezone, time] of cases) {
        const samples = await sampleCount(h, p.owner.org.id)
        const trend = `${HEADER}${time},T1,1,100\n2024-01-02 00:00:00,T1,2,100\n`
        const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, MAPPING, { timezone, force: 'true' }))
        assert.equal(res.statusCode, 201, `${timezone} ${time}: ${res.body}`)
        const batch = res.json() as { id: string; samplesStored: number; rowsRejected: number; timeRange: { from: string; to: string } }
        assert.deepEqual([batch.samplesStored, batch.rowsRejected], [1, 1], time)
        assert.match(batch.timeRange.from, /^2024-01-0[12]T/, time)
        assert.equal(await sampleCount(h, p.owner.org.id), samples + 1, `${time}: only the 2024 row is stored`)
        const report = await h.inject(p.owner, { method: 'GET', url: `/api/historian/import-batches/${batch.id}/rejections` })
        const rejections = (report.json() as { rejections: Rejection[] }).rejections
        assert.equal(rejections.length, 1, time)
        assert.equal(rejections[0]!.line, 2)
        assert.match(rejections[0]!.reason, /is outside 0000-01-01T00:00:00Z to 9999-12-31T23:59:59\.999Z once in UTC/)
        assert.equal((await h.inject(p.owner, { method: 'GET', url: `/api/historian/import-batches/${batch.id}` })).statusCode, 200)
      }
    })

    it('a file whose lines end in CR alone (classic Mac OS) is read line by line, its rejections named by line, where it stored nothing and said nothing', async () => {
      const h = shared()
      const p = await plant(h)
      const cr = (text: string) => text.replaceAll('\n', '\r')
      const trend = cr(`${HEADER}2024-02-01 00:00:00,T1,1,100\n2024-02-01 00:00:01,T1,2,100\n2024-02-01 00:00:02,T1,NaN,100\n2024-02-01 00:00:03,T1,4,100\n`)
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, cr(MAPPING)))
      assert.equal(res.statusCode, 201, res.body)
      const batch = res.json() as { id: string; rowsRead: number; samplesStored: number; rowsRejected: number }
      assert.deepEqual([batch.rowsRead, batch.samplesStored, batch.rowsRejected], [4, 3, 1])
      assert.equal(await sampleCount(h, p.owner.org.id), 3)
      const report = await h.inject(p.owner, { method: 'GET', url: `/api/historian/import-batches/${batch.id}/rejections` })
      assert.deepEqual(
        (report.json() as { rejections: Rejection[] }).rejections.map((r) => r.line),
        [4],
      )
    })

    it('a header naming a required column twice is refused 422 naming the column and both positions; nothing is stored', async () => {
      const h = shared()
      const p = await plant(h)
      const headers = [
        ['long', 'Timestamp,TagName,Value,Value,Quality\n2024-01-01 00:00:00,T1,1.5,2,100\n', 'Value', '3 and 4'],
        ['long', 'Timestamp,TagName,tagname,Value\n2024-01-01 00:00:00,T1,T2,1\n', 'TagName', '2 and 3'],
      ] as const
      for (const [format, trend, column, positions] of headers) {
        const res = await upload(h, p.owner, standardParts(p.siteCode, format, trend, MAPPING))
        assert.equal(res.statusCode, 422, res.body)
        const problem = res.json() as { code: string; errors: Array<{ in: string; pointer: string; message: string }> }
        assert.equal(problem.code, 'HistorianHeaderInvalid')
        assert.equal(problem.errors[0]!.pointer, '/trend_csv')
        assert.match(problem.errors[0]!.message, new RegExp(`line 1: .*column "${column}" twice \\(columns ${positions}\\)`))
      }
      assert.equal(await batchCount(h, p.owner.org.id), 0)
      assert.equal(await sampleCount(h, p.owner.org.id), 0)
    })
  })
}
