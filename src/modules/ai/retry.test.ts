import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { backoffMs, DEFAULT_RETRY_POLICY, isRetryableStatus, parseRetryAfterMs } from './retry.ts'

const NOW = Date.parse('2025-03-01T12:00:00Z')

describe('ai retry policy', () => {
  it('Retry-After is read as seconds, as an HTTP-date, or from retry-after-ms; garbage is ignored', () => {
    assert.equal(parseRetryAfterMs(new Headers({ 'retry-after': '3' }), NOW), 3_000)
    assert.equal(parseRetryAfterMs(new Headers({ 'retry-after': 'Sat, 01 Mar 2025 12:00:05 GMT' }), NOW), 5_000)
    assert.equal(parseRetryAfterMs(new Headers({ 'retry-after': 'Sat, 01 Mar 2025 11:00:00 GMT' }), NOW), 0)
    assert.equal(parseRetryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), NOW), 250)
    assert.equal(parseRetryAfterMs(new Headers({ 'retry-after': 'soon' }), NOW), undefined)
    assert.equal(parseRetryAfterMs(new Headers(), NOW), undefined)
  })

  it('backoff doubles from the base up to the cap, and jitter only shortens it by up to 25 %', () => {
    const none = (): number => 0
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5].map((n) => backoffMs(n, DEFAULT_RETRY_POLICY, none)),
      [500, 1000, 2000, 4000, 8000, 8000],
    )
    assert.equal(
      backoffMs(1, DEFAULT_RETRY_POLICY, () => 0.999_999),
      750,
    )
  })

  it('408, 409, 429 and 5xx are retried; other 4xx are not', () => {
    assert.deepEqual([408, 409, 429, 500, 502, 503, 504].map(isRetryableStatus), Array(7).fill(true))
    assert.deepEqual([400, 401, 403, 404, 422].map(isRetryableStatus), Array(5).fill(false))
  })
})
