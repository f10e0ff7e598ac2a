import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { HistorianHeaderInvalid } from '../errors.ts'
import { parseAll } from '../parse-stream.ts'
import { brief, parseFixture } from '../test-support.ts'

describe('wide format', () => {
  it('emits one sample per filled cell, skips empty cells and sentinels, rejects a bad cell alone', async () => {
    const { samples, summary } = await parseFixture('wide.csv', { format: 'wide', timezone: 'Europe/Berlin', sentinels: [888.8] })
    assert.deepEqual(samples.map(brief), [
      ['Kessel; Vorlauf', '2024-02-01T09:00:00.000Z', 61.5, 'good', 2],
      ['Kessel Rücklauf', '2024-02-01T09:00:00.000Z', 40.1, 'good', 2],
      ['Pumpe', '2024-02-01T09:00:00.000Z', 1, 'good', 2],
      ['Kessel; Vorlauf', '2024-02-01T09:01:00.000Z', 61.7, 'good', 3],
      ['Pumpe', '2024-02-01T09:01:00.000Z', 1, 'good', 3],
      ['Kessel Rücklauf', '2024-02-01T09:02:00.000Z', 40.3, 'good', 5],
      ['Pumpe', '2024-02-01T09:02:00.000Z', 0, 'good', 5],
      ['Kessel; Vorlauf', '2024-02-01T09:03:00.000Z', 61.9, 'good', 6],
      ['Pumpe', '2024-02-01T09:03:00.000Z', 1, 'good', 6],
      ['Kessel; Vorlauf', '2024-02-01T09:04:00.250Z', 62, 'good', 7],
      ['Kessel Rücklauf', '2024-02-01T09:04:00.250Z', 40.5, 'good', 7],
      ['Pumpe', '2024-02-01T09:04:00.250Z', 1, 'good', 7],
      ['Kessel Rücklauf', '2024-02-01T09:06:00.000Z', 2, 'good', 9],
      ['Pumpe', '2024-02-01T09:06:00.000Z', 3, 'good', 9],
    ])
    assert.deepEqual(
      summary.rejections.map((r) => [r.line, r.column]),
      [
        [6, 'Kessel Rücklauf'],
        [8, undefined],
        [9, 'Kessel; Vorlauf'],
      ],
    )
    assert.match(summary.rejections[0]!.reason, /'kaputt' is not a number/)
    assert.match(summary.rejections[1]!.reason, /not a calendar date/)
    assert.match(summary.rejections[2]!.reason, /thousands separator/)
    assert.equal(summary.rowsRead, 7)
    assert.equal(summary.sentinelCells, 1)
    assert.equal(summary.emptyCells, 1)
  })

  it('refuses a header that names the same tag twice', async () => {
    await assert.rejects(parseAll(['time,A,B,A\n2024-01-01 00:00:00,1,2,3\n'], { format: 'wide' }), HistorianHeaderInvalid)
  })

  it('rejects a row with more filled fields than header columns', async () => {
    const { summary } = await parseAll(['time,A\n2024-01-01 00:00:00,1,2\n'], { format: 'wide' })
    assert.match(summary.rejections[0]!.reason, /row has 3 fields but the header has 2 columns/)
  })
})
