import assert from 'node:assert/strict'
import { test } from 'node:test'
import { bucketFor, NICE_BUCKETS } from './buckets.ts'

const HOUR = 3_600_000
const DAY = 24 * HOUR

test('the bucket is the smallest readable width giving at most one bucket per pixel', () => {
  assert.equal(bucketFor(12 * HOUR, 900), '1m') // 48 s a pixel
  assert.equal(bucketFor(DAY, 1000), '2m') // 86.4 s a pixel
  assert.equal(bucketFor(30 * DAY, 1000), '1h') // 43 min a pixel
  assert.equal(bucketFor(365 * DAY, 800), '12h')
  for (const [span, pixels] of [
    [HOUR, 700],
    [7 * DAY, 1200],
    [90 * DAY, 640],
  ] as const) {
    const text = bucketFor(span, pixels)!
    const ms = NICE_BUCKETS.find(([, t]) => t === text)![0]
    assert.ok(span / ms <= pixels, `${text} gives ${span / ms} buckets for ${pixels} px`)
  }
})

test('below a second a pixel the chart asks for raw samples (no bucket)', () => {
  assert.equal(bucketFor(10 * 60_000, 1000), null)
  assert.equal(bucketFor(1000 * 999, 1000), null)
  assert.equal(bucketFor(1000 * 1000, 1000), '1s')
})

test('very long periods get whole days, and a tiny chart still counts as 50 pixels', () => {
  assert.equal(bucketFor(20 * 365 * DAY, 100), `${Math.ceil((20 * 365 * DAY) / 100 / DAY)}d`)
  assert.equal(bucketFor(50 * 60_000, 10), '1m')
})

test('every width offered is one the series endpoint accepts (digits and a unit of ms, s, m, h, d)', () => {
  for (const [ms, text] of NICE_BUCKETS) {
    const match = /^(\d+)(s|m|h|d)$/.exec(text)
    assert.ok(match, text)
    assert.equal(Number(match[1]) * { s: 1000, m: 60_000, h: HOUR, d: DAY }[match[2] as 's' | 'm' | 'h' | 'd'], ms)
  }
})
