import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { brief, parseFixture } from '../test-support.ts'

describe('ignition-tall format', () => {
  it('reads BOM + CRLF exports, QualityCode names and OPC codes, and orders the repeated autumn hour per tag', async () => {
    const { samples, summary } = await parseFixture('ignition-tall.csv', { format: 'ignition-tall', timezone: 'Europe/Paris' })
    assert.deepEqual(samples.map(brief), [
      ['[default]Line1/Motor1/Speed', '2024-10-26T23:59:00.000Z', 1450.5, 'good', 2],
      // 02:10 happens twice on 27 Oct 2024 in Paris: first seen, so the earlier (CEST) one.
      ['[default]Line1/Motor1/Speed', '2024-10-27T00:10:00.000Z', 1451, 'good', 3],
      ['[default]Line1/Motor1/State', '2024-10-27T00:10:00.000Z', 'text:Running', 'good', 4],
      ['[default]Line1/Motor1/Speed', '2024-10-27T00:20:00.000Z', 0, 'bad', 5],
      // The tag went back from 02:20 to 02:05 in wall time: the second (CET) pass.
      ['[default]Line1/Motor1/Speed', '2024-10-27T01:05:00.000Z', 1449, 'uncertain', 7],
      ['[default]Line, 2/Temp', '2024-10-27T01:00:00.000Z', 21.5, 'bad', 9],
      ['[default]Line1/Motor1/Speed', '2024-10-27T02:00:00.000Z', 1447, 'good', 10],
    ])
    assert.deepEqual(summary.rejections, [{ line: 8, reason: "unknown quality 'Fancy_Quality'" }])
    assert.equal(summary.separator, ',')
  })
})
