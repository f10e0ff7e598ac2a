import assert from 'node:assert/strict'
import { test } from 'node:test'
import { iso } from './service/series.ts'

// The reads format every timestamp with `iso` (service/series.ts), a faster form of toISOString: the same text for
// every time a Date holds, whatever order the times come in (it keeps the last day's date part).

test('iso writes what toISOString writes: field edges, before 1970, extended years, the ends of the Date range, any order', () => {
  const edges = [
    0,
    -1,
    1,
    999,
    1_000,
    59_999,
    60_000,
    3_599_999,
    3_600_000,
    86_399_999,
    86_400_000,
    -86_400_000,
    -86_400_001,
    Date.UTC(2024, 1, 29, 23, 59, 59, 999),
    Date.UTC(2024, 2, 31, 1, 0, 0, 5),
    Date.UTC(-5, 0, 1),
    Date.UTC(-1, 11, 31, 23, 59, 59, 999),
    253_402_300_799_999,
    253_402_300_800_000,
    8_640_000_000_000_000,
    -8_640_000_000_000_000,
    8_639_999_999_999_999,
  ]
  for (const ms of [...edges, ...edges.reverse()]) assert.equal(iso(ms), new Date(ms).toISOString(), String(ms))
  // A deterministic sweep (a linear congruential sequence) over the whole range, then one second apart over two days.
  let x = 12_345
  for (let i = 0; i < 20_000; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648
    const ms = Math.round((x / 2_147_483_648 - 0.5) * 2 * 8_640_000_000_000_000)
    assert.equal(iso(ms), new Date(ms).toISOString(), String(ms))
  }
  for (let ms = Date.UTC(2024, 0, 1) - 86_400_000; ms < Date.UTC(2024, 0, 1) + 86_400_000; ms += 997)
    assert.equal(iso(ms), new Date(ms).toISOString(), String(ms))
})
