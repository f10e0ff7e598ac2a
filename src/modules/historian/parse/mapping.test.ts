import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { HistorianMappingInvalid } from './errors.ts'
import { parseMappingCsv } from './mapping.ts'
import { fixtureBytes } from './test-support.ts'

const problemsOf = async (text: string | Buffer) => {
  try {
    await parseMappingCsv(typeof text === 'string' ? text : [text])
  } catch (error) {
    assert.ok(error instanceof HistorianMappingInvalid)
    assert.equal(error.code, 'HistorianMappingInvalid')
    return error.problems
  }
  assert.fail('expected HistorianMappingInvalid')
}

describe('parseMappingCsv', () => {
  it('maps historian tags to instance, key, unit and scale (header names in any case)', async () => {
    const map = await parseMappingCsv([fixtureBytes('mapping.csv')])
    assert.deepEqual(
      [...map.entries()],
      [
        ['068_PI01', { instanceId: 'ins_boiler1', tagKey: 'pressure', unit: 'bar', scale: 1 }],
        ['VAVCO 2-03.Setpoint, Offset', { instanceId: 'ins_vav203', tagKey: 'setpoint_offset', unit: 'degC', scale: 0.1 }],
        ['1C11.TE11', { instanceId: 'ins_furnace', tagKey: 'temperature', unit: null, scale: 1 }],
      ],
    )
  })

  it('refuses a tag mapped twice, naming both lines', async () => {
    const problems = await problemsOf(fixtureBytes('mapping-duplicate.csv'))
    assert.deepEqual(problems, [{ line: 4, message: "historian tag '068_PI01' is mapped twice, on lines 2 and 4" }])
  })

  it('reports every bad row with its line, not just the first', async () => {
    const problems = await problemsOf(fixtureBytes('mapping-bad.csv'))
    assert.deepEqual(
      problems.map((p) => [p.line, p.message]),
      [
        [2, 'instance_id is empty'],
        [3, 'historian_tag is empty'],
        [4, "scale 'zero' is not a non-zero number"],
        [5, "scale '0' is not a non-zero number"],
      ],
    )
  })

  it('requires the header, naming the missing columns', async () => {
    const problems = await problemsOf('tag,instance\nA,ins_1\n')
    assert.equal(problems[0]!.line, 1)
    assert.match(problems[0]!.message, /lacks historian_tag, instance_id, tag_key/)
    assert.match((await problemsOf(''))[0]!.message, /empty/)
  })
})
