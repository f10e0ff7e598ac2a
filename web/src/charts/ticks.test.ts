import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decimalsOf, tickLabels } from './ticks.ts'

test('ticks around zero never read "-0": a tick that rounds to zero is written 0', () => {
  assert.deepEqual(tickLabels([-0.0004, -0.0002, -0, 0.0002], 0.0002, 'en'), ['-0.0004', '-0.0002', '0.0000', '0.0002'])
  assert.deepEqual(tickLabels([-1e-17, 0.5, 1], 0.5, 'en'), ['0.0', '0.5', '1.0'])
  for (const label of tickLabels([-3e-5, -2e-5, -1e-5, 0], 1e-5, 'en')) assert.doesNotMatch(label, /^-0(\.0*)?$/)
})

test('labels carry the decimals of their step, so neighbouring ticks never read the same', () => {
  assert.equal(decimalsOf(0.25), 2)
  assert.equal(decimalsOf(5), 0)
  assert.equal(decimalsOf(1e-4), 4)
  assert.equal(decimalsOf(0.1 + 0.2), 1)
  assert.deepEqual(tickLabels([0, 2500, 5000], 2500, 'en'), ['0', '2,500', '5,000'])
  const labels = tickLabels([-0.003, -0.002, -0.001], 0.001, 'en')
  assert.equal(new Set(labels).size, 3, labels.join(' '))
})
