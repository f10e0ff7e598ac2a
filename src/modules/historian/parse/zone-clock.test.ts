import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { ZoneClock } from './zone-clock.ts'

const wall = (iso: string) => Date.parse(`${iso}Z`)
const utc = (ms: number) => new Date(ms).toISOString()

describe('ZoneClock', () => {
  it('reads the offset of the first centuries and of years before 1 right (not 1900 + a two-digit year, not 1 BC as 1 AD)', () => {
    const utcClock = new ZoneClock('UTC')
    const paris = new ZoneClock('Europe/Paris')
    for (const text of [
      '0000-01-01T00:00:00',
      '-000001-06-15T12:00:00',
      '0001-01-01T00:00:00',
      '0050-06-01T12:00:00',
      '0099-12-31T23:59:59',
      '1899-12-31T23:00:00',
    ]) {
      assert.equal(utcClock.offsetAt(wall(text)), 0, text)
      // Paris kept its local mean time, +00:09:21, until 1891.
      assert.equal(paris.offsetAt(wall(text)), 561_000, text)
      assert.equal(utc(paris.toUtc(wall(text), 'a')), utc(wall(text) - 561_000), text)
    }
  })

  it('converts Europe/Paris winter and summer wall times', () => {
    const clock = new ZoneClock('Europe/Paris')
    assert.equal(utc(clock.toUtc(wall('2024-01-15T12:00:00'), 'a')), '2024-01-15T11:00:00.000Z')
    assert.equal(utc(clock.toUtc(wall('2024-07-15T12:00:00'), 'a')), '2024-07-15T10:00:00.000Z')
  })

  it('refuses a wall time in the spring-forward gap, with a reason naming the zone', () => {
    const clock = new ZoneClock('Europe/Paris')
    assert.ok(Number.isNaN(clock.toUtc(wall('2024-03-31T02:30:00'), 'a')))
    assert.match(clock.reason, /2024-03-31 02:30:00.000 does not exist in Europe\/Paris/)
    assert.equal(utc(clock.toUtc(wall('2024-03-31T01:59:59.999'), 'a')), '2024-03-31T00:59:59.999Z')
    assert.equal(utc(clock.toUtc(wall('2024-03-31T03:00:00'), 'a')), '2024-03-31T01:00:00.000Z')
  })

  it('resolves the repeated autumn hour by order: earlier offset first, later once the series goes back', () => {
    const clock = new ZoneClock('Europe/Paris')
    const times = ['02:00', '02:30', '02:59', '02:00', '02:30'].map((t) => utc(clock.toUtc(wall(`2024-10-27T${t}:00`), 'T1')))
    assert.deepEqual(times, [
      '2024-10-27T00:00:00.000Z',
      '2024-10-27T00:30:00.000Z',
      '2024-10-27T00:59:00.000Z',
      '2024-10-27T01:00:00.000Z',
      '2024-10-27T01:30:00.000Z',
    ])
  })

  it('a wall time of the repeated hour listed twice in a row is both passes: +02:00 (CEST) first, +01:00 (CET) second', () => {
    const clock = new ZoneClock('Europe/Paris')
    const times = ['01:30', '02:30', '02:30', '03:30'].map((t) => utc(clock.toUtc(wall(`2024-10-27T${t}:00`), 'T1')))
    assert.deepEqual(times, ['2024-10-26T23:30:00.000Z', '2024-10-27T00:30:00.000Z', '2024-10-27T01:30:00.000Z', '2024-10-27T02:30:00.000Z'])
  })

  it('keeps the ambiguity state per series, so a tag first seen in the repeat takes the earlier offset', () => {
    const clock = new ZoneClock('Europe/Paris')
    clock.toUtc(wall('2024-10-27T02:40:00'), 'A')
    assert.equal(utc(clock.toUtc(wall('2024-10-27T02:10:00'), 'A')), '2024-10-27T01:10:00.000Z')
    assert.equal(utc(clock.toUtc(wall('2024-10-27T02:10:00'), 'B')), '2024-10-27T00:10:00.000Z')
  })

  it('handles a southern-hemisphere zone and a half-hour DST shift (Australia/Lord_Howe)', () => {
    const sydney = new ZoneClock('Australia/Sydney')
    assert.ok(Number.isNaN(sydney.toUtc(wall('2024-10-06T02:30:00'), 'a')))
    const lordHowe = new ZoneClock('Australia/Lord_Howe')
    assert.ok(Number.isNaN(lordHowe.toUtc(wall('2024-10-06T02:15:00'), 'a')))
    assert.equal(utc(lordHowe.toUtc(wall('2024-10-06T02:45:00'), 'a')), '2024-10-05T15:45:00.000Z')
  })

  it('matches the zone exactly for every instant outside the repeated hour (cache is never stale)', () => {
    const clock = new ZoneClock('Europe/Paris')
    const ny = new ZoneClock('America/New_York')
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2015, 0, 1), max: Date.UTC(2030, 0, 1) }), (instant) => {
        for (const zone of [clock, ny]) {
          const wallMs = instant + zone.offsetAt(instant)
          const back = zone.toUtc(wallMs, `k${instant}`)
          // A wall time of the repeated hour maps to its earlier instant the first time.
          const isRepeat = zone.offsetAt(instant - 3_600_000) !== zone.offsetAt(instant)
          if (!isRepeat || back === instant) assert.equal(back, instant)
          else assert.equal(back, instant - 3_600_000)
        }
      }),
      { numRuns: 3000 },
    )
  })
})
