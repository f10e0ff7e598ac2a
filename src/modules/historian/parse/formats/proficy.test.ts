import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { HistorianHeaderInvalid } from '../errors.ts'
import { parseAll } from '../parse-stream.ts'
import { brief, parseFixture } from '../test-support.ts'

describe('proficy format', () => {
  it('skips * comments and [Data], reads US dates, text and percent DataQuality', async () => {
    const { samples, summary } = await parseFixture('proficy.csv', { format: 'proficy' })
    assert.deepEqual(samples.map(brief), [
      ['TIGER.IMPORT_TAG1.F_CV', '2001-07-20T11:07:00.000Z', 1, 'good', 5],
      ['TIGER.IMPORT_TAG1.F_CV', '2001-07-20T11:08:30.000Z', 2.5, 'bad', 6],
      ['TIGER.IMPORT,TAG2.F_CV', '2001-07-20T11:09:00.000Z', 3, 'uncertain', 9],
      ['TIGER.IMPORT_TAG3.A_CV', '2001-07-20T11:10:00.000Z', 'text:Open', 'good', 10],
      ['TIGER.IMPORT_TAG1.F_CV', '2001-07-20T11:11:00.000Z', 4, 'uncertain', 11],
      ['TIGER.IMPORT_TAG1.F_CV', '2001-07-20T11:12:00.000Z', 5, 'good', 12],
    ])
    assert.deepEqual(
      summary.rejections.map((r) => r.line),
      [13, 14],
    )
    assert.match(summary.rejections[0]!.reason, /unknown quality 'Excellent'/)
    assert.match(summary.rejections[1]!.reason, /not a calendar date/)
  })

  it('refuses a [Tags] section, which holds no samples', async () => {
    await assert.rejects(parseAll(['[Tags]\nTagname,Description\nA,desc\n'], { format: 'proficy' }), (error: unknown) => {
      assert.ok(error instanceof HistorianHeaderInvalid)
      assert.match(error.message, /\[Tags\] on line 1 is not a \[Data\] section/)
      return true
    })
  })

  it('refuses a file of comments only', async () => {
    await assert.rejects(parseAll(['* nothing\n[Data]\n'], { format: 'proficy' }), HistorianHeaderInvalid)
  })
})
