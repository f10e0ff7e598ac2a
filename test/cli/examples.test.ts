// examples/historian/ (issue 27): each mapping file names every tag of its public sample and no other, and the
// sample read with the options examples/historian/README.md gives accounts for its values as that README says.
import assert from 'node:assert/strict'
import { createReadStream, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { parseMappingCsv } from '../../src/modules/historian/parse/mapping.ts'
import type { ParseOptions } from '../../src/modules/historian/parse/options.ts'
import { parseAll } from '../../src/modules/historian/parse/parse-stream.ts'
import { SAMPLES_DIR } from '../../src/modules/historian/parse/test-support.ts'

const EXAMPLES = join(import.meta.dirname, '..', '..', 'examples', 'historian')

/** The README's table: sample, instance, options, and the values read / stored / sentinels / empty it states. */
const SAMPLES: Array<{ file: string; instance: string; options: ParseOptions; figures: [number, number, number, number] }> = [
  {
    file: 'hurence_chemistry_long.csv',
    instance: 'LAB-1',
    options: { format: 'long', timezone: 'Europe/Paris', sentinels: [-9999] },
    figures: [3_495, 3_431, 64, 0],
  },
  { file: 'hurence_echantillons_export_long.csv', instance: 'LAB-2', options: { format: 'long', timezone: 'Europe/Paris' }, figures: [1_295, 1_295, 0, 0] },
  {
    file: 'logisland_heating_controller_wide.csv',
    instance: 'HEAT-1',
    options: { format: 'wide', timezone: 'Europe/Berlin', sentinels: [888.8] },
    figures: [26_529, 24_189, 2_336, 4],
  },
  { file: 'osisoft_pidata_piconfig.csv', instance: 'AHU-1', options: { format: 'piconfig', timezone: 'UTC' }, figures: [4, 4, 0, 0] },
]

describe('examples/historian: the mapping files of the public samples', () => {
  it('each maps exactly the tags of its sample to its instance, and the sample accounts for its values as the README states', async () => {
    const readme = readFileSync(join(EXAMPLES, 'README.md'), 'utf8')
    for (const s of SAMPLES) {
      const mapping = await parseMappingCsv(readFileSync(join(EXAMPLES, s.file.replace(/\.csv$/, '.mapping.csv')), 'utf8'))
      const { samples, summary } = await parseAll(createReadStream(SAMPLES_DIR + s.file), { ...s.options, sentinels: [] })
      const tags = new Set(samples.map((x) => x.tag))
      assert.deepEqual([...mapping.keys()].sort(), [...tags].sort(), `${s.file}: the mapping names every tag of the sample and no other`)
      assert.deepEqual(new Set([...mapping.values()].map((m) => m.instanceId)), new Set([s.instance]), s.file)
      const read = await parseAll(createReadStream(SAMPLES_DIR + s.file), s.options)
      assert.deepEqual([read.summary.valuesRead, read.summary.samples, read.summary.sentinelCells, read.summary.emptyCells], s.figures, s.file)
      assert.equal(summary.valuesRead, s.figures[0])
      // format=auto, as the README's historian example sends it: the same layout found, the same accounting.
      const auto = await parseAll(createReadStream(SAMPLES_DIR + s.file), { ...s.options, format: 'auto' })
      assert.equal(auto.summary.format, s.options.format, `${s.file}: format=auto finds ${s.options.format}`)
      assert.deepEqual([auto.summary.valuesRead, auto.summary.samples, auto.summary.sentinelCells, auto.summary.emptyCells], s.figures, `${s.file} (auto)`)
      assert.ok(readme.includes(`| \`${s.file}\` | \`${s.instance}\` |`), `the README's table lists ${s.file}`)
    }
  })
})
