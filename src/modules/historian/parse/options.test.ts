import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { checkOptions, settleOptions } from './options.ts'
import type { ParseOptions } from './options.ts'
import { parseStream } from './parse-stream.ts'

describe('options', () => {
  it('throws TypeError at setup for each bad option, before any byte is read', () => {
    const bad: unknown[] = [
      { format: 'csv' },
      { format: 'long', separator: '|' },
      { format: 'long', decimal: ',', separator: ',' },
      { format: 'long', timezone: 'Mars/Olympus' },
      { format: 'long', dateOrder: 'dym' },
      { format: 'long', sentinels: [Number.NaN] },
      { format: 'long', qualityScale: 'stars' },
      { format: 'long', maxRejections: -1 },
    ]
    for (const options of bad) assert.throws(() => parseStream([], options as ParseOptions), TypeError, JSON.stringify(options))
  })

  it('defaults: decimal either on ; files and . on , files, UTC, the format date order', () => {
    checkOptions({ format: 'long' })
    const semicolon = settleOptions({ format: 'auto' }, 'proficy', ';')
    assert.equal(semicolon.decimal, 'either')
    assert.equal(semicolon.dateOrder, 'mdy')
    assert.equal(semicolon.timezone, 'UTC')
    assert.equal(semicolon.qualityScale, 'percent')
    assert.equal(settleOptions({ format: 'long' }, 'long', ',').decimal, '.')
    assert.equal(settleOptions({ format: 'aveva-history' }, 'aveva-history', ',').dateOrder, 'ymd')
  })
})
