import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { keyIdGenerator } from './key-id.ts'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('key ids', () => {
  it('are UUIDv7 carrying the mint time, and grow within one millisecond, past 4096 of them and when the clock steps back', () => {
    const next = keyIdGenerator()
    const at = Date.UTC(2026, 10, 27, 12)
    const first = next(at)
    assert.match(first, UUID_V7)
    assert.equal(parseInt(first.replaceAll('-', '').slice(0, 12), 16), at)
    const ids = [first, ...Array.from({ length: 5000 }, () => next(at)), next(at - 1000), next(at + 10)]
    for (const id of ids) assert.match(id, UUID_V7)
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `id ${i} grows`)
  })
})
