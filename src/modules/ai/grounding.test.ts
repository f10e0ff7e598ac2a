import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { namedNodes } from './grounding.ts'

const fixture = fileURLToPath(new URL('../../../test/fixtures/ai/named-nodes.ts', import.meta.url))
const node = (id: string, name: string | null = null) => ({ id, name })

describe('the nodes a prompt names (AI grounding)', () => {
  it('by id or name as a whole word, case aside, in the order the prompt names them; at most 11', () => {
    const nodes = [node('TX-1', 'Main transformer'), node('TX-12'), node('M-1', 'Crusher motor'), node('ISO', 'Spare feeder'), node('B')]
    const ids = (prompt: string) => namedNodes(prompt, nodes).map((n) => n.id)
    assert.deepEqual(ids('Why did the CRUSHER MOTOR stop after tx-1 tripped?'), ['M-1', 'TX-1'])
    assert.deepEqual(ids('TX-12 and TX-1_old and xTX-1 and B'), ['TX-12'], 'a prefix, a longer word or an id of one character names nothing')
    assert.deepEqual(ids('spare feeder, Spare Feeder'), ['ISO'])
    const many = Array.from({ length: 30 }, (_, i) => node(`F${i}`))
    assert.deepEqual(
      namedNodes(
        many
          .map((n) => n.id)
          .reverse()
          .join(' '),
        many,
      ).map((n) => n.id),
      Array.from({ length: 11 }, (_, i) => `F${29 - i}`),
    )
  })

  it('100 000 nodes named alike and a prompt of one letter repeated are answered in a process bounded to 60 s (each node scanned the whole prompt: minutes)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', fixture], { encoding: 'utf8', timeout: 60_000 })
    assert.equal(run.signal, null, `not answered within 60 s (it answers in about a second): ${run.stderr}`)
    assert.equal(run.status, 0, run.stderr)
    assert.deepEqual(JSON.parse(run.stdout), { hostile: 0, ordinary: ['N0', 'N1', 'N2', 'N3', 'N4', 'N5', 'N6', 'N7', 'N8', 'N9'] })
  })
})
