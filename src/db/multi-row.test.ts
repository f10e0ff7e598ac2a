import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { inMultiRowStatements } from './multi-row.ts'

async function sizes(rows: number, columns: number): Promise<number[]> {
  const seen: number[] = []
  const input = Array.from({ length: rows }, (_, i) => i)
  const written: number[] = []
  await inMultiRowStatements(input, columns, async (chunk) => {
    seen.push(chunk.length)
    written.push(...chunk)
  })
  assert.deepEqual(written, input, 'every row once, in order')
  return seen
}

describe('multi-row statements', () => {
  it('a bulk is cut into power-of-two statements of at most 1 024 rows, under the 32 766-parameter limit', async () => {
    assert.deepEqual(await sizes(2000, 14), [1024, 512, 256, 128, 64, 16])
    assert.deepEqual(await sizes(5000, 14), [1024, 1024, 1024, 1024, 512, 256, 128, 8])
    assert.deepEqual(await sizes(3, 14), [2, 1])
    assert.deepEqual(await sizes(0, 14), [])
    // 40 columns: 1 024 rows would bind 40 960 parameters.
    assert.deepEqual(await sizes(1000, 40), [512, 256, 128, 64, 32, 8])
  })

  it('whatever the bulk sizes, a table gets at most eleven statement sizes (SQLite keeps each prepared text)', async () => {
    const distinct = new Set<number>()
    for (let n = 1; n <= 5000; n += 7) for (const s of await sizes(n, 14)) distinct.add(s)
    assert.ok(distinct.size <= 11, `${distinct.size} sizes`)
    for (const s of distinct) assert.equal(s & (s - 1), 0, `${s} is a power of two`)
  })
})
