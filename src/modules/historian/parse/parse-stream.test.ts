import assert from 'node:assert/strict'
import { createReadStream } from 'node:fs'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { HistorianHeaderInvalid } from './errors.ts'
import type { ParseOptions } from './options.ts'
import { parseAll, parseStream } from './parse-stream.ts'
import { FIXTURE_DIR, brief, fixtureBytes, parseFixture, splitAt } from './test-support.ts'

const FIXTURES: readonly [string, ParseOptions][] = [
  ['long.csv', { format: 'long', timezone: 'Europe/Paris', sentinels: [-9999] }],
  ['long-dst-paris.csv', { format: 'auto', timezone: 'Europe/Paris' }],
  ['wide.csv', { format: 'auto', timezone: 'Europe/Berlin', sentinels: [888.8] }],
  ['ignition-tall.csv', { format: 'auto', timezone: 'Europe/Paris' }],
  ['aveva-history.csv', { format: 'aveva-history' }],
  ['proficy.csv', { format: 'auto' }],
  ['citect-pa.csv', { format: 'citect-pa' }],
  ['piconfig.csv', { format: 'auto' }],
]

describe('parseStream', () => {
  it('gives the same samples, rejections and summary for every fixture split at any single byte', async () => {
    for (const [file, options] of FIXTURES) {
      const bytes = fixtureBytes(file)
      const whole = await parseAll([bytes], options)
      for (let cut = 1; cut < bytes.length; cut++) {
        assert.deepEqual(await parseAll(splitAt(bytes, [cut]), options), whole, `${file} cut at ${cut}`)
      }
    }
  })

  it('gives the same result for random multi-way splits (fast-check)', async () => {
    for (const [file, options] of FIXTURES) {
      const bytes = fixtureBytes(file)
      const whole = await parseAll([bytes], options)
      await fc.assert(
        fc.asyncProperty(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 20 }), async (cuts) => {
          assert.deepEqual(await parseAll(splitAt(bytes, cuts), options), whole)
        }),
        { numRuns: 20 },
      )
    }
  })

  it('rejects the spring-gap row and orders the repeated autumn hour per tag (Europe/Paris)', async () => {
    const { samples, summary } = await parseFixture('long-dst-paris.csv', { format: 'long', timezone: 'Europe/Paris' })
    assert.deepEqual(samples.map(brief), [
      ['T1', '2024-10-26T23:30:00.000Z', 1, 'good', 2],
      ['T1', '2024-10-27T00:00:00.000Z', 2, 'good', 3],
      ['T1', '2024-10-27T00:30:00.000Z', 3, 'good', 4],
      ['T1', '2024-10-27T01:00:00.000Z', 4, 'good', 5],
      ['T1', '2024-10-27T01:30:00.000Z', 5, 'good', 6],
      ['T1', '2024-10-27T02:00:00.000Z', 6, 'good', 7],
      ['T2', '2024-10-27T00:15:00.000Z', 7, 'good', 8],
      ['T2', '2024-10-27T00:45:00.000Z', 8.5, 'good', 9],
      ['T1', '2024-03-31T01:00:00.000Z', 10, 'good', 11],
    ])
    assert.equal(summary.rejections.length, 1)
    assert.equal(summary.rejections[0]!.line, 10)
    assert.match(summary.rejections[0]!.reason, /2024-03-31 02:30:00.000 does not exist in Europe\/Paris/)
  })

  it('reads a Readable stream and yields one batch per chunk with the chosen format', async () => {
    const run = parseStream(createReadStream(FIXTURE_DIR + 'proficy.csv', { highWaterMark: 64 }), { format: 'auto' })
    const batches = []
    for await (const batch of run) batches.push(batch)
    assert.ok(batches.length > 3)
    assert.ok(batches.every((b) => b.format === 'proficy'))
    assert.equal(
      batches.reduce((n, b) => n + b.rowsRead, 0),
      run.summary.rowsRead,
    )
    assert.equal(run.summary.rowsRead, 8)
    assert.equal(run.summary.format, 'proficy')
  })

  it('hands a large chunk over a 32 KiB piece at a time, so that few rows and samples are alive at once', async () => {
    const line = (i: number) =>
      `2024-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z,T${String(i % 100).padStart(2, '0')},${String(i % 1000).padStart(5, '0')}\n`
    const width = line(0).length // every row has it
    const rows = Math.ceil((256 * 1024) / width)
    const chunk = Buffer.from(`timestamp,tag,value\n${Array.from({ length: rows }, (_, i) => line(i)).join('')}`)
    // A piece completes its whole rows and the row the previous piece cut.
    const perPiece = Math.ceil((32 * 1024) / width) + 1
    const run = parseStream([chunk], { format: 'long' })
    const sizes = []
    const columns = new Set()
    let values = 0
    for await (const batch of run) {
      sizes.push(batch.samples.length)
      columns.add(batch.samples)
      for (let i = 0; i < batch.samples.length; i++) values += batch.samples.values[i]!
    }
    assert.ok(sizes.length >= 8, `${sizes.length} batches`)
    assert.ok(Math.max(...sizes) <= perPiece, `largest batch ${Math.max(...sizes)}, a piece holds ${perPiece}`)
    assert.equal(run.summary.samples, rows)
    // One set of columns for every batch (no object a sample), each batch's values its own.
    assert.equal(columns.size, 1)
    assert.equal(
      values,
      Array.from({ length: rows }, (_, i) => i % 1000).reduce((a, b) => a + b, 0),
    )
  })

  it('keeps only the first maxRejections reasons but counts them all', async () => {
    const rows = Array.from({ length: 50 }, (_, i) => `bad time ${i},A,1`).join('\n')
    const { summary } = await parseAll([`time,tag,value\n${rows}\n`], { format: 'long', maxRejections: 5 })
    assert.equal(summary.rejectedCount, 50)
    assert.deepEqual(
      summary.rejections.map((r) => r.line),
      [2, 3, 4, 5, 6],
    )
  })

  it('refuses an empty file (or one of blank lines) as a header problem', async () => {
    await assert.rejects(parseAll([''], { format: 'auto' }), HistorianHeaderInvalid)
    await assert.rejects(parseAll(['\n\r\n;;\n'], { format: 'long' }), HistorianHeaderInvalid)
  })

  it('reads a header-only file as zero rows', async () => {
    const { samples, summary } = await parseAll(['time,tag,value\n'], { format: 'long' })
    assert.equal(samples.length, 0)
    assert.equal(summary.rowsRead, 0)
  })

  it('can be iterated only once', async () => {
    const run = parseStream(['time,tag,value\n'], { format: 'long' })
    for await (const _ of run);
    await assert.rejects(async () => {
      for await (const _ of run);
    }, /only once/)
  })
})
