import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { brief, parseFixture } from '../test-support.ts'

describe('aveva-history format', () => {
  it('reads Value, falls back to vValue text for string tags, maps Quality then QualityDetail', async () => {
    const { samples, summary } = await parseFixture('aveva-history.csv', { format: 'aveva-history', timezone: 'America/New_York' })
    assert.deepEqual(samples.map(brief), [
      ['SysTimeSec', '2024-05-01T17:45:10.123Z', 10, 'good', 2],
      ['ReactLevel', '2024-05-01T17:45:11.000Z', 1520.25, 'good', 3],
      ['BatchName', '2024-05-01T17:45:12.000Z', 'text:Batch "A", lot 7', 'good', 4],
      ['ReactLevel', '2024-05-01T17:45:14.000Z', 1519.5, 'uncertain', 6],
      ['ReactLevel', '2024-05-01T17:45:15.000Z', 1519, 'uncertain', 7],
    ])
    assert.deepEqual(
      summary.rejections.map((r) => r.line),
      [8, 9, 10],
    )
    assert.match(summary.rejections[0]!.reason, /unknown quality 7/)
    assert.match(summary.rejections[1]!.reason, /not year-first/)
    assert.match(summary.rejections[2]!.reason, /'Running' is not a number/)
    // Line 5: Value and vValue are both NULL (bad quality): no sample, no rejection.
    assert.equal(summary.emptyCells, 1)
  })
})
