import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fromWallClock, wallClock } from './time-zone.ts'

test('a wall-clock time reads and writes in the given zone, across a DST change', () => {
  const at = Date.UTC(2026, 0, 5, 8, 30, 15)
  assert.equal(wallClock(at, 'Asia/Kolkata'), '2026-01-05T14:00:15')
  assert.equal(wallClock(at, 'UTC'), '2026-01-05T08:30:15')
  assert.equal(fromWallClock('2026-01-05T14:00:15', 'Asia/Kolkata'), at)
  assert.equal(fromWallClock('2026-01-05T14:00', 'Asia/Kolkata'), at - 15_000)
  // Sydney: +11 in January (daylight saving), +10 in July.
  assert.equal(fromWallClock('2026-01-05T12:00', 'Australia/Sydney'), Date.UTC(2026, 0, 5, 1))
  assert.equal(fromWallClock('2026-07-05T12:00', 'Australia/Sydney'), Date.UTC(2026, 6, 5, 2))
  assert.equal(wallClock(Date.UTC(2026, 6, 5, 2), 'Australia/Sydney'), '2026-07-05T12:00:00')
  assert.ok(Number.isNaN(fromWallClock('yesterday', 'UTC')))
})
