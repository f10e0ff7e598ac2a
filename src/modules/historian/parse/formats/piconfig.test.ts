import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { brief, parseFixture } from '../test-support.ts'

describe('piconfig format', () => {
  it('skips @ directives, follows @istr, reads PI timestamps, digital states as text and PI statuses', async () => {
    const { samples, summary } = await parseFixture('piconfig.csv', { format: 'piconfig', timezone: 'America/Denver' })
    assert.deepEqual(samples.map(brief), [
      ['sinusoid', '2020-03-23T12:57:23.020Z', 48.5, 'good', 4],
      ['VAVCO 2-03.Setpoint, Offset', '2020-03-23T09:27:22.379Z', 3.5, 'good', 5],
      ['cdt158', '2020-03-24T06:00:00.000Z', 'text:Shutdown', 'bad', 6],
      ['cdt158', '2020-03-24T06:00:01.000Z', 12, 'uncertain', 7],
      ['cdt158', '2020-03-24T16:00:00.000Z', 14, 'good', 9],
    ])
    assert.deepEqual(
      summary.rejections.map((r) => r.line),
      [8],
    )
    assert.match(summary.rejections[0]!.reason, /not a calendar date/)
  })
})
