import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { HistorianHeaderInvalid } from '../errors.ts'
import { parseAll } from '../parse-stream.ts'
import { brief, parseFixture } from '../test-support.ts'

describe('citect-pa format', () => {
  it('adds Milliseconds to Time, skips blank/NA/GATED cells and keeps alarm states as text', async () => {
    const { samples, summary } = await parseFixture('citect-pa.csv', { format: 'citect-pa', timezone: 'Australia/Sydney' })
    assert.deepEqual(samples.map(brief), [
      ['Pane1-Pen2', '2004-06-14T15:17:25.100Z', 10, 'good', 2],
      ['Pane1-Alarm', '2004-06-14T15:17:25.100Z', 'text:Off', 'good', 2],
      ['Pane1-Pen1', '2004-06-14T15:17:26.100Z', 1, 'good', 3],
      ['Pane1-Pen2', '2004-06-14T15:17:26.100Z', 20, 'good', 3],
      ['Pane1-Alarm', '2004-06-14T15:17:26.100Z', 'text:Low [Unacknowledged]', 'good', 3],
      ['Pane1-Alarm', '2004-06-14T15:17:27.100Z', 'text:Low [Acknowledged]', 'good', 4],
      ['Pane1-Pen1', '2004-06-14T15:17:28.100Z', 3, 'good', 5],
      ['Pane1-Pen2', '2004-06-14T15:17:28.100Z', 25, 'good', 5],
      ['Pane1-Alarm', '2004-06-14T15:17:28.100Z', 'text:Low [Acknowledged]', 'good', 5],
      ['Pane1-Alarm', '2004-06-14T15:17:30.000Z', 'text:On', 'good', 7],
    ])
    assert.deepEqual(
      summary.rejections.map((r) => [r.line, r.column]),
      [
        [6, undefined],
        [7, 'Pane1-Pen2'],
      ],
    )
    assert.match(summary.rejections[0]!.reason, /Milliseconds '1500'/)
    assert.match(summary.rejections[1]!.reason, /decimal comma/)
    assert.equal(summary.emptyCells, 4)
  })

  it('refuses a header that does not start Time,Milliseconds', async () => {
    await assert.rejects(parseAll(['Time,Pen1\n15/06/2004 01:17:25,1\n'], { format: 'citect-pa' }), HistorianHeaderInvalid)
  })
})
