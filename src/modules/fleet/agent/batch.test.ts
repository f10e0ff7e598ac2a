import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Change } from '../outbox/store.ts'
import { fitBatch } from './batch.ts'

const change = (seq: number, text: string): Change => ({
  seq,
  tx: 0,
  table: 'audit_events',
  site: '',
  key: [seq],
  op: 'upsert',
  row: { id: seq, detail: text },
  base: null,
  origin: '',
  at: 0,
})

describe('the agent cuts a push by bytes as well as by count (issue 26)', () => {
  it('keeps the longest prefix that fits, in order, counting UTF-8 bytes; one change larger than the bound goes alone', () => {
    const size = (c: Change) => Buffer.byteLength(JSON.stringify(c)) + 1
    const changes = [change(1, 'a'.repeat(100)), change(2, 'é'.repeat(100)), change(3, 'c'.repeat(100))]
    const two = size(changes[0]!) + size(changes[1]!)
    assert.deepEqual(
      fitBatch(changes, two).map((c) => c.seq),
      [1, 2],
    )
    // 'é' is two bytes: a bound one byte short of the first two (counted in UTF-8) keeps one.
    assert.deepEqual(
      fitBatch(changes, two - 1).map((c) => c.seq),
      [1],
    )
    assert.deepEqual(
      fitBatch(changes, 10).map((c) => c.seq),
      [1],
    )
    assert.deepEqual(
      fitBatch(changes, 1 << 20).map((c) => c.seq),
      [1, 2, 3],
    )
    assert.deepEqual(fitBatch([], 10), [])
  })
})
