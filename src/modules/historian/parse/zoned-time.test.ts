import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseZonedTime } from './timestamps.ts'

test('a zoned ISO 8601 date-time reads as Date.parse reads it, over every offset form and fraction length', () => {
  let seed = 7
  const next = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
    return seed % n
  }
  const two = (n: number) => String(n).padStart(2, '0')
  for (let i = 0; i < 5000; i++) {
    const year = 1 + next(9998)
    const month = 1 + next(12)
    const day = 1 + next(28)
    const time = `${two(next(24))}:${two(next(60))}`
    const seconds = next(3) === 0 ? '' : `:${two(next(60))}${next(2) === 0 ? '' : `.${String(next(1_000_000_000)).slice(0, 1 + next(9))}`}`
    const hours = next(15)
    const zone = next(3) === 0 ? 'Z' : `${next(2) === 0 ? '+' : '-'}${two(hours)}:${two(hours === 14 ? 0 : next(60))}`
    const text = `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}T${time}${seconds}${zone}`
    assert.equal(parseZonedTime(text), Date.parse(text), text)
  }
  assert.equal(parseZonedTime('2024-02-29T12:00:00.1239z'), Date.parse('2024-02-29T12:00:00.123Z'))
  assert.equal(parseZonedTime('2024-05-01t00:00:00+02:00'), Date.parse('2024-04-30T22:00:00Z'))
})

test('a date or time that does not exist, or text without a zone, is NaN where Date.parse rolls over or guesses', () => {
  for (const text of [
    '2026-02-31T00:00:00Z', // Date.parse: 3 March
    '2025-02-29T00:00:00Z', // not a leap year
    '1900-02-29T00:00:00Z',
    '2026-04-31T10:00:00Z',
    '2026-01-01T24:00:00Z', // Date.parse: the next day
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-01-00T00:00:00Z',
    '2026-01-01T00:60:00Z',
    '2026-12-31T23:59:60Z',
    '2026-01-01T00:00:00+15:00', // no zone is that far east
    '2026-01-01T00:00:00+14:30',
    '2026-01-01T00:00:00-14:01',
    '2026-01-01T00:00:00+01:60',
    '2026-01-01T00:00:00', // Date.parse: the server's zone
    '2026-01-01',
    'Mar 7 2026 10:00 GMT',
    '2026-01-01T00:00:00.Z',
    '2026-01-01T00:00:00.1234567890Z',
    ' 2026-01-01T00:00:00Z',
  ])
    assert.ok(Number.isNaN(parseZonedTime(text)), text)
  assert.equal(parseZonedTime('2000-02-29T00:00:00Z'), Date.parse('2000-02-29T00:00:00Z'))
  for (const text of ['2026-01-01T00:00:00+14:00', '2026-01-01T00:00:00-14:00', '2026-01-01T00:00:00-12:00', '2026-01-01T00:00:00+05:45'])
    assert.equal(parseZonedTime(text), Date.parse(text), text)
})
