import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { HistorianHeaderInvalid } from '../errors.ts'
import { parseAll } from '../parse-stream.ts'
import { brief, fixtureBytes, parseFixture } from '../test-support.ts'

describe('long format', () => {
  it('reads quoted tags, text states, percent qualities and offsets, rejecting bad rows with reasons', async () => {
    const { samples, summary } = await parseFixture('long.csv', { format: 'long', timezone: 'Europe/Paris', sentinels: [-9999] })
    assert.deepEqual(samples.map(brief), [
      ['Boiler,1.Temp', '2024-03-31T00:59:59.000Z', 61.5, 'good', 2],
      ['Boiler,1.Temp', '2024-03-31T01:00:00.000Z', 62, 'good', 5],
      ['Pump.State', '2024-03-31T01:00:01.000Z', 'text:Running', 'good', 6],
      ['Pump.Speed', '2024-03-31T02:00:00.000Z', 1450, 'uncertain', 7],
      ['Pump.Speed', '2024-03-31T07:00:00.000Z', 1500, 'bad', 13],
    ])
    assert.deepEqual(
      summary.rejections.map((r) => r.line),
      [3, 8, 9, 10, 12],
    )
    assert.match(summary.rejections[0]!.reason, /does not exist in Europe\/Paris/)
    assert.match(summary.rejections[1]!.reason, /thousands separator/)
    assert.match(summary.rejections[2]!.reason, /empty quality/)
    assert.match(summary.rejections[3]!.reason, /not a timestamp/)
    assert.match(summary.rejections[4]!.reason, /NaN/)
    assert.equal(summary.rowsRead, 11)
    assert.equal(summary.sentinelCells, 1)
  })

  it('finds columns by name in any case and order and ignores extra columns', async () => {
    const text = 'Quality;Extra;NAME;value;DateTime\n100.0;x;A;1.5;2024-01-01 00:00:00\n'
    const { samples } = await parseAll([text], { format: 'long' })
    assert.deepEqual(samples.map(brief), [['A', '2024-01-01T00:00:00.000Z', 1.5, 'good', 2]])
  })

  it('reads OPC quality codes when qualityScale is opc and rejects an unknown quality', async () => {
    const text = 'time,tag,value,quality\n2024-01-01 00:00:00,A,1,192\n2024-01-01 00:00:01,A,2,64\n2024-01-01 00:00:02,A,3,7000000\n'
    const { samples, summary } = await parseAll([text], { format: 'long', qualityScale: 'opc' })
    assert.deepEqual(
      samples.map((s) => s.quality),
      ['good', 'uncertain'],
    )
    assert.match(summary.rejections[0]!.reason, /unknown quality '7000000'/)
  })

  it('refuses a header without a tag column, naming what it found', async () => {
    await assert.rejects(parseFixture('long-bad-header.csv', { format: 'long' }), (error: unknown) => {
      assert.ok(error instanceof HistorianHeaderInvalid)
      assert.equal(error.code, 'HistorianHeaderInvalid')
      assert.match(error.message, /lacks tag\|tagname\|name; found "time","value","quality"/)
      return true
    })
  })

  it('refuses a semicolon file read with a comma separator, and says which separator it seems to use', async () => {
    await assert.rejects(parseFixture('long-semicolon.csv', { format: 'long', separator: ',' }), (error: unknown) => {
      assert.ok(error instanceof HistorianHeaderInvalid)
      assert.match(error.message, /seems separated by ';', not ','/)
      return true
    })
  })

  it('refuses decimal , on a file detected as comma-separated, before any row', async () => {
    await assert.rejects(parseAll(['time,tag,value\n2024-01-01 00:00:00,A,1\n'], { format: 'long', decimal: ',' }), HistorianHeaderInvalid)
  })

  it('accepts a decimal comma in a semicolon file', async () => {
    const { samples } = await parseAll([fixtureBytes('long-semicolon.csv')], { format: 'long' })
    assert.equal(samples[0]!.value, 21.015)
  })

  it('refuses a point decimal once the file used a decimal comma (no silent 1000x)', async () => {
    const text = 'time;tag;value\n2024-01-01 00:00:00;A;48,5\n2024-01-01 00:00:01;A;1.234\n'
    const { samples, summary } = await parseAll([text], { format: 'long' })
    assert.deepEqual(
      samples.map((s) => s.value),
      [48.5],
    )
    assert.match(summary.rejections[0]!.reason, /decimal point/)
  })
})
