import assert from 'node:assert/strict'
import { createReadStream } from 'node:fs'
import { describe, it } from 'node:test'
import type { ParseOptions } from './options.ts'
import { parseAll } from './parse-stream.ts'
import { SAMPLES_DIR } from './test-support.ts'
import type { Sample } from './types.ts'

// Real third-party exports, read byte for byte as published; the expected counts are the
// ones their README states (checked independently with cut/sort/uniq).
const parseSample = (file: string, options: ParseOptions) => parseAll(createReadStream(SAMPLES_DIR + file, { highWaterMark: 16 * 1024 }), options)
const distinct = (samples: readonly Sample[], key: (s: Sample) => unknown) => new Set(samples.map(key)).size
const count = (samples: readonly Sample[], keep: (s: Sample) => boolean) => samples.filter(keep).length

describe('third-party historian samples', () => {
  it('hurence_chemistry_long: 3 495 rows, 1 178 tags, 60 day-first timestamps, 168 bad rows', async () => {
    const { samples, summary } = await parseSample('hurence_chemistry_long.csv', { format: 'auto', timezone: 'Europe/Paris' })
    assert.equal(summary.format, 'long')
    assert.equal(summary.separator, ';')
    assert.equal(summary.rowsRead, 3495)
    assert.equal(summary.rejectedCount, 0)
    assert.equal(samples.length, 3495)
    assert.equal(
      distinct(samples, (s) => s.tag),
      1178,
    )
    assert.equal(
      distinct(samples, (s) => s.ts),
      60,
    )
    assert.equal(
      count(samples, (s) => s.quality === 'bad'),
      168,
    )
    assert.equal(
      count(samples, (s) => s.quality === 'good'),
      3327,
    )
    // 01/03/2020 is 1 March (day-first), local Paris time (UTC+1 in winter).
    assert.equal(new Date(Math.min(...samples.map((s) => s.ts))).toISOString(), '2020-02-29T23:00:00.000Z')
    assert.equal(new Date(Math.max(...samples.map((s) => s.ts))).toISOString(), '2020-02-29T23:00:59.000Z')
    const row310 = samples.find((s) => s.line === 310)!
    assert.deepEqual([row310.tag, new Date(row310.ts).toISOString(), row310.value], ['1C11.TE11', '2020-02-29T23:00:21.000Z', 216.442871094])
    // Without the sentinel option, -9999 is an ordinary value (README: sentinel rows carry quality 100).
    assert.deepEqual([samples.find((s) => s.line === 322)!.value, samples.find((s) => s.line === 322)!.quality], [-9999, 'good'])
  })

  it('hurence_chemistry_long with sentinel -9999: the 64 sentinel rows give no sample', async () => {
    const { samples, summary } = await parseSample('hurence_chemistry_long.csv', { format: 'long', sentinels: [-9999], timezone: 'Europe/Paris' })
    assert.equal(summary.sentinelCells, 64)
    assert.equal(samples.length, 3495 - 64)
    assert.equal(
      count(samples, (s) => s.value === -9999),
      0,
    )
  })

  it('hurence_echantillons_export_long: 1 295 rows, 723 tags, extra dataUPtag columns ignored, 7 bad, 52 negative', async () => {
    const { samples, summary } = await parseSample('hurence_echantillons_export_long.csv', { format: 'auto', timezone: 'Europe/Paris' })
    assert.equal(summary.format, 'long')
    assert.equal(summary.rowsRead, 1295)
    assert.equal(summary.rejectedCount, 0)
    assert.equal(samples.length, 1295)
    assert.equal(
      distinct(samples, (s) => s.tag),
      723,
    )
    assert.equal(
      distinct(samples, (s) => s.ts),
      60,
    )
    assert.equal(
      count(samples, (s) => s.quality === 'bad'),
      7,
    )
    assert.equal(
      count(samples, (s) => (s.value ?? 0) < 0),
      52,
    )
    assert.ok(samples.every((s) => s.text === null))
    // Case-different tags stay distinct: TI122A and TI122a_COEFA are two series.
    assert.ok(samples.some((s) => s.tag.includes('TI122A')) && samples.some((s) => s.tag.includes('TI122a')))
    assert.equal(new Date(Math.min(...samples.map((s) => s.ts))).toISOString(), '2021-03-04T09:23:00.000Z')
  })

  it('osisoft_pidata_piconfig: 4 headerless rows, tags with spaces and GUIDs, 5-digit fractions, no final newline', async () => {
    const { samples, summary } = await parseSample('osisoft_pidata_piconfig.csv', { format: 'auto', timezone: 'America/Los_Angeles' })
    assert.equal(summary.format, 'piconfig')
    assert.equal(summary.rowsRead, 4)
    assert.equal(summary.rejectedCount, 0)
    assert.deepEqual(
      samples.map((s) => [s.tag, new Date(s.ts).toISOString(), s.value, s.quality]),
      [
        ['Building_Data_101215.AnalogValue1.PresentValue', '2020-03-23T13:57:23.020Z', 12, 'good'],
        ['VAVCO 2-03.Setpoint Offset Current.1315f488-6e35-5fba-1531-384ac098e1ef', '2020-03-23T10:27:22.379Z', 3.5, 'good'],
        ['Building_Data_101221.AnalogValue1.PresentValue', '2020-03-23T10:12:22.629Z', 32.4, 'good'],
        ['VAVCO 2-09.Setpoint Offset Current.1315f49e-6e35-5fba-1531-384ac098e1ef', '2020-03-23T10:57:22.395Z', 3.2, 'good'],
      ],
    )
  })

  it('logisland_heating_controller_wide: 717 rows x 37 tags, non-padded d.M.yyyy, 2 336 sentinel 888.8 cells', async () => {
    const { samples, summary } = await parseSample('logisland_heating_controller_wide.csv', { format: 'auto', sentinels: [888.8], timezone: 'Europe/Berlin' })
    assert.equal(summary.format, 'wide')
    assert.equal(summary.rowsRead, 717)
    assert.equal(summary.rejectedCount, 0)
    assert.equal(summary.sentinelCells, 2336)
    assert.equal(summary.emptyCells, 4)
    assert.equal(samples.length, 717 * 37 - 2336 - 4)
    assert.equal(
      distinct(samples, (s) => s.ts),
      717,
    )
    assert.ok(samples.some((s) => s.tag === 'temperatur_rücklauf'))
    assert.ok(samples.some((s) => s.tag === 'wärmemenge'))
    const july = samples.find((s) => s.line === 718)!
    assert.equal(new Date(july.ts).toISOString(), '2012-07-21T03:10:00.000Z')
  })
})
