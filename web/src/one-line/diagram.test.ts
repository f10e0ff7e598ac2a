import assert from 'node:assert/strict'
import { test } from 'node:test'
import { wrapLabel } from './diagram.ts'

test('node labels wrap between words onto at most two lines; what does not fit ends in "…"', () => {
  assert.deepEqual(wrapLabel('Incomer', 12, 2), ['Incomer'])
  assert.deepEqual(wrapLabel('Main switchboard', 12, 2), ['Main', 'switchboard'])
  assert.deepEqual(wrapLabel('Overland conveyor drive motor', 12, 2), ['Overland', 'conveyor dr…'])
  assert.deepEqual(wrapLabel('TRANSFORMER-33KV-NORTH', 12, 2), ['TRANSFORMER-', '33KV-NORTH'], 'a word longer than a line is split')
  for (const line of wrapLabel('A very long equipment name that goes on and on', 12, 2)) assert.ok(line.length <= 12, line)
})
