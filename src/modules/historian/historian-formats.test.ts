import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import type { FormatName } from './parse/index.ts'
import { assertNothingStored, fixture, mappingFor, plant, series, standardParts, upload, sharedHarness } from './test-setup.ts'

const FORMATS: Array<[FormatName, string]> = [
  ['long', 'long.csv'],
  ['wide', 'wide.csv'],
  ['ignition-tall', 'ignition-tall.csv'],
  ['aveva-history', 'aveva-history.csv'],
  ['proficy', 'proficy.csv'],
  ['citect-pa', 'citect-pa.csv'],
  ['piconfig', 'piconfig.csv'],
]

for (const dialect of testDialects()) {
  describe(`${dialect}: historian import of each layout`, () => {
    const shared = sharedHarness(dialect)
    for (const [format, file] of FORMATS) {
      it(`a ${format} export is stored whole: every parsed sample readable, every rejected row reported`, async () => {
        const h = shared()
        const p = await plant(h)
        const { csv, tags, samples } = await mappingFor(file, format)
        const res = await upload(h, p.owner, standardParts(p.siteCode, format, fixture(file), csv))
        assert.equal(res.statusCode, 201, res.body)
        const batch = res.json()
        assert.equal(batch.status, 'complete')
        assert.equal(batch.format, format)
        assert.match(batch.id, /^bat_/)
        const distinct = new Set(samples.samples.map((s) => `${s.tag}|${s.ts}`))
        assert.equal(batch.samplesStored, distinct.size)
        assert.equal(batch.rowsRejected, samples.summary.rejectedCount)
        assert.equal(batch.rejections.first.length, Math.min(100, samples.summary.rejectedCount))
        assert.equal(batch.rowsRead, samples.summary.rowsRead)
        assert.match(batch.contentHash.trendCsv, /^sha256:[0-9a-f]{64}$/)
        assert.equal(batch.tags.length, tags.length)
        // The first tag read back equals the parse, latest row winning per timestamp.
        const expected = new Map<number, number | string | null>()
        for (const s of samples.samples.filter((x) => x.tag === tags[0])) expected.set(s.ts, s.value ?? s.text)
        const read = await series(h, p, 'instanceId=ins_boiler1&tag=t0')
        assert.deepEqual(
          read.samples.map((s) => [Date.parse(s.ts), s.value ?? s.text]),
          [...expected.entries()].sort((a, b) => a[0] - b[0]),
        )
      })
    }

    it('format=auto recognises the layout and says which it chose', async () => {
      const h = shared()
      const p = await plant(h)
      const { csv } = await mappingFor('aveva-history.csv', 'aveva-history')
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'auto', fixture('aveva-history.csv'), csv))
      assert.equal(res.statusCode, 201, res.body)
      assert.equal(res.json().format, 'aveva-history')
    })

    it('dryRun=true answers the report with 200 and stores nothing', async () => {
      const h = shared()
      const p = await plant(h)
      const { csv, samples } = await mappingFor('wide.csv', 'wide')
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'wide', fixture('wide.csv'), csv, { dryRun: 'true' }))
      assert.equal(res.statusCode, 200, res.body)
      const batch = res.json()
      assert.equal(batch.id, null)
      assert.equal(batch.status, 'dryRun')
      assert.equal(batch.samplesStored, samples.samples.length)
      await assertNothingStored(h, p)
    })

    it('a dry run with a mapping of the header alone lists every tag of the file with its rows (the console mapping editor reads them so) and stores nothing', async () => {
      const h = shared()
      const p = await plant(h)
      const { tags, samples } = await mappingFor('long.csv', 'long')
      const res = await upload(
        h,
        p.owner,
        standardParts(p.siteCode, 'long', fixture('long.csv'), 'historian_tag,instance_id,tag_key\r\n', { dryRun: 'true', maxRejections: '0' }),
      )
      assert.equal(res.statusCode, 200, res.body)
      const batch = res.json()
      assert.deepEqual(
        batch.unmappedTags.map((t: { tag: string }) => t.tag),
        tags,
      )
      const rowsOf = (tag: string) => samples.samples.filter((s) => s.tag === tag).length
      assert.deepEqual(
        batch.unmappedTags.map((t: { rows: number }) => t.rows),
        tags.map(rowsOf),
      )
      assert.deepEqual(batch.rejections.first, [], 'maxRejections=0 lists no row')
      assert.equal(batch.samplesStored, 0)
      await assertNothingStored(h, p)
    })
  })
}
