// Session 26: what an import quotes of a refused cell or field is bounded. A reason quoted its cell whole, so a file of
// rows of 100 000 characters each (a bad timestamp, a number-like text, an unmapped tag's name) made the answer and
// the stored report grow by the row for each of up to 10 000 kept rejections (300 such rows: 10 MB of answer), and
// an unmapped tag of any length was listed by its whole name. Each quoted value is now its first 40 characters and its
// length; a historian tag is at most 1 024 characters in a mapping, and a longer one in a file is not listed.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from './harness.ts'
import { NO_RATE_LIMIT } from './hardening/support.ts'
import { plant, standardParts, upload } from '../src/modules/historian/test-setup.ts'

const MAPPING = 'historian_tag,instance_id,tag_key\nA,ins_pump,flow\n'
const LONG = 100_000

for (const dialect of testDialects()) {
  describe(`${dialect}: an import's reasons quote what they refuse in at most 40 characters`, () => {
    it('rows of 100 000-character cells: every kept reason is short, the answer and the stored report stay small, the long tag is not listed; a mapping tag past 1 024 characters and a form field of 60 000 are refused in a short answer', async (t) => {
      const h = await harness(t, dialect, NO_RATE_LIMIT)
      const p = await plant(h)
      const x = 'x'.repeat(LONG)
      const rows = [
        ...Array.from({ length: 100 }, (_, i) => `${x}${i},A,1`), // a timestamp nothing reads
        ...Array.from({ length: 100 }, (_, i) => `2026-01-01T00:${String(i % 60).padStart(2, '0')}:00Z,A,1${'2'.repeat(LONG)}.5.5`), // number-like, not a number
        ...Array.from({ length: 100 }, (_, i) => `2026-01-01T01:${String(i % 60).padStart(2, '0')}:00Z,${'T'.repeat(LONG)}${i},1`), // unmapped tags, each its own
        '2026-01-01T02:00:00Z,A,7',
      ]
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', `timestamp,tag,value\n${rows.join('\n')}\n`, MAPPING, { maxRejections: '10000' }))
      assert.equal(res.statusCode, 201, res.body.slice(0, 300))
      const batch = res.json() as {
        id: string
        samplesStored: number
        rowsRejected: number
        unmappedTags: unknown[]
        rejections: { first: Array<{ reason: string }> }
      }
      assert.equal(batch.samplesStored, 1)
      assert.equal(batch.rowsRejected, 300)
      assert.deepEqual(batch.unmappedTags, [], 'no tag longer than a mapping may name is listed')
      assert.ok(res.body.length < 200_000, `the answer holds ${res.body.length} characters`)
      const all = await h.inject(p.owner, { url: `/api/historian/import-batches/${batch.id}/rejections` })
      assert.equal(all.statusCode, 200)
      const reasons = (all.json() as { rejections: Array<{ reason: string }> }).rejections.map((r) => r.reason)
      assert.equal(reasons.length, 300)
      assert.deepEqual(
        reasons.filter((r) => r.length > 200),
        [],
      )
      assert.deepEqual(
        reasons.filter((r) => !/' \(\d{6} characters\)/.test(r)),
        [],
        'each reason quotes its cell as its first characters and its length',
      )
      assert.ok(
        reasons.some((r) => r.includes('longer than 1024 characters, which no mapping_csv names')),
        'the long tag says why',
      )
      const stored = await h.handle.db.selectFrom('historian_batches').select('report').where('id', '=', batch.id).executeTakeFirstOrThrow()
      assert.ok(String(stored.report).length < 200_000, `the stored report holds ${String(stored.report).length} characters`)

      const longTag = await upload(
        h,
        p.owner,
        standardParts(p.siteCode, 'long', 'timestamp,tag,value\n2026-01-01T00:00:00Z,A,1\n', `${MAPPING}${'M'.repeat(1025)},ins_pump,level\n`),
      )
      assert.equal(longTag.statusCode, 422, longTag.body.slice(0, 300))
      assert.match(longTag.body, /historian_tag is longer than 1024 characters/)
      assert.ok(longTag.body.length < 2_000)

      const zone = await upload(
        h,
        p.owner,
        standardParts(p.siteCode, 'long', 'timestamp,tag,value\n2026-01-01T00:00:00Z,A,1\n', MAPPING, { timezone: 'z'.repeat(60_000) }),
      )
      assert.equal(zone.statusCode, 400)
      assert.match(zone.json().detail, /\(60000 characters\) is not an IANA time zone/)
      assert.ok(zone.body.length < 1_000, `the refusal holds ${zone.body.length} characters`)
    })
  })
}
