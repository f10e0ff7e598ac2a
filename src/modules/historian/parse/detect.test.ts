import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { HistorianFormatUndetected } from './errors.ts'
import { parseFixture } from './test-support.ts'
import type { FormatName } from './types.ts'

const CASES: readonly [string, FormatName][] = [
  ['long.csv', 'long'],
  ['long-dst-paris.csv', 'long'],
  ['wide.csv', 'wide'],
  ['ignition-tall.csv', 'ignition-tall'],
  ['aveva-history.csv', 'aveva-history'],
  ['proficy.csv', 'proficy'],
  ['citect-pa.csv', 'citect-pa'],
  ['piconfig.csv', 'piconfig'],
]

describe('format auto', () => {
  for (const [file, format] of CASES) {
    it(`recognises ${file} as ${format} and parses it as that format would`, async () => {
      const auto = await parseFixture(file, { format: 'auto', timezone: 'Europe/Paris' })
      const explicit = await parseFixture(file, { format, timezone: 'Europe/Paris' })
      assert.equal(auto.summary.format, format)
      assert.deepEqual(auto.samples, explicit.samples)
    })
  }

  it('fails with every candidate layout listed when nothing matches', async () => {
    await assert.rejects(parseFixture('unknown-layout.csv', { format: 'auto' }), (error: unknown) => {
      assert.ok(error instanceof HistorianFormatUndetected)
      assert.equal(error.code, 'HistorianFormatUndetected')
      assert.equal(error.candidates.length, 7)
      assert.match(error.message, /"alpha","beta","gamma"/)
      assert.match(error.message, /ignition-tall: Path,Value,Quality,Timestamp/)
      return true
    })
  })
})
