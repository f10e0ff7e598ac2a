import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decadeLabel, decades } from './tcc.ts'

test('TCC axes: the decades covering a range, at least one wide, labelled without exponents or "-0"', () => {
  assert.deepEqual(decades(300, 18_000), [100, 1000, 10_000, 100_000])
  assert.deepEqual(decades(0.2, 17), [0.1, 1, 10, 100])
  assert.deepEqual(decades(100, 100), [100, 1000], 'a single value still spans a decade')
  assert.deepEqual(decades(0.01, 1000).map(decadeLabel), ['0.01', '0.1', '1', '10', '100', '1k'])
  assert.deepEqual([10_000, 100_000, 1_000_000].map(decadeLabel), ['10k', '100k', '1M'])
})
