import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import type { DateOrder } from './options.ts'
import { daysFromCivil } from './calendar.ts'
import { parseTimestamp } from './timestamps.ts'
import type { ParsedTime } from './timestamps.ts'

/** The wall time as an ISO string plus the offset, or the refusal reason. */
function read(text: string, order: DateOrder = 'dmy'): string {
  const out: ParsedTime = { wallMs: 0, offsetMs: 0 }
  const problem = parseTimestamp(text, order, out)
  if (problem !== undefined) return `refused: ${problem}`
  const wall = new Date(out.wallMs).toISOString().slice(0, 23)
  return Number.isNaN(out.offsetMs) ? `${wall} local` : `${wall} ${out.offsetMs / 60_000}min`
}

describe('parseTimestamp', () => {
  it('reads ISO 8601 with Z, an explicit offset, or none (local)', () => {
    assert.equal(read('2024-03-31T01:59:59Z'), '2024-03-31T01:59:59.000 0min')
    assert.equal(read('2024-03-31T01:59:59.5+02:00'), '2024-03-31T01:59:59.500 120min')
    assert.equal(read('2024-03-31 01:59:59-0530'), '2024-03-31T01:59:59.000 -330min')
    assert.equal(read('2024-03-31 01:59:59 UTC'), '2024-03-31T01:59:59.000 0min')
    assert.equal(read('2024-03-31 01:59:59.1234567'), '2024-03-31T01:59:59.123 local')
    assert.equal(read('2024-03-31'), '2024-03-31T00:00:00.000 local')
  })

  it('reads day-first or month-first numeric dates only as dateOrder says', () => {
    assert.equal(read('01/03/2020 00:00:21', 'dmy'), '2020-03-01T00:00:21.000 local')
    assert.equal(read('01/03/2020 00:00:21', 'mdy'), '2020-01-03T00:00:21.000 local')
    assert.match(read('01/03/2020 00:00:21', 'ymd'), /not year-first/)
    assert.match(read('13/25/2020 00:00', 'mdy'), /not a calendar date/)
  })

  it('reads non-padded d.M.yyyy with milliseconds (the logisland logger)', () => {
    assert.equal(read('21.7.2012 05:10:00.000'), '2012-07-21T05:10:00.000 local')
  })

  it('reads PI dd-Mon-yy with five fractional digits, truncating to milliseconds', () => {
    assert.equal(read('23-Mar-20 06:57:23.02055'), '2020-03-23T06:57:23.020 local')
    assert.equal(read('1-jan-1999 00:00:00'), '1999-01-01T00:00:00.000 local')
  })

  it('reads US M/d/yyyy h:mm:ss AM/PM and two-digit years without seconds', () => {
    assert.equal(read('5/1/2023 1:45:10 PM', 'mdy'), '2023-05-01T13:45:10.000 local')
    assert.equal(read('5/1/2023 12:05:00 AM', 'mdy'), '2023-05-01T00:05:00.000 local')
    assert.equal(read('7/20/01 11:07', 'mdy'), '2001-07-20T11:07:00.000 local')
    assert.match(read('5/1/2023 13:45:10 PM', 'mdy'), /no valid time of day/)
  })

  it('reads a 13-digit epoch in milliseconds as UTC', () => {
    assert.equal(read('1711846799000'), '2024-03-31T00:59:59.000 0min')
  })

  it('refuses impossible dates, times and garbage with the text in the reason', () => {
    assert.match(read('2023-02-29 00:00:00'), /'2023-02-29 00:00:00' is not a calendar date/)
    assert.match(read('2024-01-01 24:00:00'), /no valid time of day/)
    assert.match(read('2024-01-01 10:61'), /no valid time of day/)
    assert.match(read('2024-01-01 10:00:00+99:00'), /unreadable UTC offset/)
    assert.match(read('yesterday'), /not a timestamp/)
    assert.match(read(''), /not a timestamp/)
    assert.match(read('2024-01-01 10:00:00 garbage'), /not a timestamp/)
  })

  it('agrees with Date.UTC on every valid calendar date and time', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('1900-01-01'), max: new Date('2199-12-31'), noInvalidDate: true }), (date) => {
        const iso = date.toISOString()
        const out: ParsedTime = { wallMs: 0, offsetMs: 0 }
        assert.equal(parseTimestamp(iso, 'ymd', out), undefined)
        assert.equal(out.wallMs, date.getTime())
        const [y, m, d] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()]
        assert.equal(daysFromCivil(y, m, d) * 86_400_000, Date.UTC(y, m - 1, d))
      }),
      { numRuns: 2000 },
    )
  })
})
