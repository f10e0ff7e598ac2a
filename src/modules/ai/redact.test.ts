import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { redact, REDACTION_KINDS, REDACTION_PLACEHOLDERS, totalRedactions } from './redact.ts'
import type { RedactionCounts } from './redact.ts'

const NONE: RedactionCounts = { apiKey: 0, cipRoute: 0, ip: 0, pin: 0 }
const KEY = 'csk_8fK2mQ9xLp4Rt7Vw1Zb3Nc6Hd0Js5Ya2'

function check(input: string, expected: string, counts: Partial<RedactionCounts>): void {
  const result = redact(input)
  assert.equal(result.text, expected)
  assert.deepEqual(result.counts, { ...NONE, ...counts })
}

describe('redaction: each kind becomes its placeholder and is counted', () => {
  it('IPv4 addresses become [IP], a port stays', () => {
    check('PLC at 10.0.0.5:44818, HMI 192.168.1.20.', 'PLC at [IP]:44818, HMI [IP].', { ip: 2 })
  })

  it('IPv6 addresses become [IP]: full, compressed, with a zone, with an embedded IPv4', () => {
    check('2001:db8:0:0:8a2e:370:7334:1 and fe80::1%eth0 and 2001:db8::8a2e:370:7334. and ::ffff:10.0.0.5', '[IP] and [IP] and [IP]. and [IP]', { ip: 4 })
  })

  it('CIP routes with an IP link become [CIP_ROUTE] (counted once, not as an IP)', () => {
    check('route 2,10.0.0.5,1,0 to the L85', 'route [CIP_ROUTE] to the L85', { cipRoute: 1 })
    check('try 2, 10.0.0.5, 1, 0 instead', 'try [CIP_ROUTE] instead', { cipRoute: 1 })
    check('bridge 1,3,2,192.168.10.7,1,0 works', 'bridge [CIP_ROUTE] works', { cipRoute: 1 })
  })

  it('numbers-only CIP routes become [CIP_ROUTE] after path, route or slot words', () => {
    check('The CIP path is 1,0.', 'The CIP path is [CIP_ROUTE].', { cipRoute: 1 })
    check('gateway=10.1.2.3&path=1,0&cpu=LGX', 'gateway=[IP]&path=[CIP_ROUTE]&cpu=LGX', { ip: 1, cipRoute: 1 })
    check('"path": "1,0"', '"path": "[CIP_ROUTE]"', { cipRoute: 1 })
    check('connection path 1,0,2,3', 'connection path [CIP_ROUTE]', { cipRoute: 1 })
  })

  it('API key plaintexts (csk_ + 32 base62) become [API_KEY]', () => {
    check(`curl -H "X-Api-Key: ${KEY}" https://x`, 'curl -H "X-Api-Key: [API_KEY]" https://x', { apiKey: 1 })
  })

  it('digit runs of 6 to 12 standing alone become [PIN]', () => {
    check('PIN 482913. Badge:482913551, door 123456789012', 'PIN [PIN]. Badge:[PIN], door [PIN]', { pin: 3 })
  })

  it('counts add up per kind and in total', () => {
    const result = redact(`key ${KEY}, PLC 10.0.0.5 slot 1,0, fe80::1, PIN 748201`)
    assert.deepEqual(result.counts, { apiKey: 1, cipRoute: 1, ip: 2, pin: 1 })
    assert.equal(totalRedactions(result.counts), 5)
  })
})

describe('redaction: plant prompts are left alone', () => {
  const untouched = [
    'motor M-101 trips at 415 V after 12.5 s',
    'firmware 32.011',
    'tag 1C11.TE11 reads 85.3 degC',
    'version 1.2.3 and firmware 10.2.0.3 and fw: 4.1.0.27',
    'dates 2024-01-15, 15.01.2024, 2024.01.15, 20240115, 15012024',
    'at 2024-01-15T10:30:00.123456Z, epoch 1700000000, stamp 202401151030',
    'durations PT123456S, P1234567D and PT0.5S',
    'time 10:30:45, MAC 00:1A:2B:3C:4D:5E, std::string, a::b',
    'values 1,0 and 2,5 bar; 1,234,567 parts; 12,5 s ramp',
    'pressure 100000 Pa, flow 250000 kg/h, 1500000 W, 120000 rpm',
    'Modbus holding register 400001',
    'invalid 300.1.1.1',
    'motor M-101, pump P-201A, breaker Q1.2, drive G120C',
  ]
  for (const text of untouched) {
    it(`unchanged: ${text}`, () => check(text, text, {}))
  }
})

describe('redaction: configuration per kind', () => {
  it('only the listed kinds are redacted', () => {
    const text = `PLC 10.0.0.5 PIN 482913 key ${KEY}`
    const result = redact(text, ['pin'])
    assert.equal(result.text, `PLC 10.0.0.5 PIN [PIN] key ${KEY}`)
    assert.deepEqual(result.counts, { ...NONE, pin: 1 })
  })

  it('with CIP routes off, the IP inside a route is still redacted as [IP]', () => {
    assert.equal(redact('route 2,10.0.0.5,1,0', ['ip']).text, 'route 2,[IP],1,0')
  })

  it('no kinds leaves the text as it is', () => {
    assert.deepEqual(redact('PLC 10.0.0.5', []), { text: 'PLC 10.0.0.5', counts: NONE })
  })
})

describe('redaction: properties', () => {
  const octet = fc.integer({ min: 0, max: 255 })
  const words = fc.constantFrom('PLC at', 'ping', 'the HMI', 'IP:', 'gateway', '(')

  it('any IPv4 address in a sentence is redacted', () => {
    fc.assert(
      fc.property(words, fc.tuple(octet, octet, octet, octet), (word, parts) => {
        const result = redact(`${word} ${parts.join('.')} now`)
        return result.text === `${word} [IP] now` && result.counts.ip === 1
      }),
    )
  })

  it('a three-part version number is never redacted', () => {
    fc.assert(
      fc.property(fc.tuple(fc.nat(999), fc.nat(999), fc.nat(99_999)), (parts) => {
        const text = `firmware ${parts.join('.')} installed`
        return redact(text).text === text
      }),
    )
  })

  it('any csk_ key is redacted', () => {
    const base62 = fc.constantFrom(...'0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ')
    fc.assert(
      fc.property(fc.string({ unit: base62, minLength: 32, maxLength: 32 }), (body) => {
        return redact(`key=csk_${body};`).text === 'key=[API_KEY];'
      }),
    )
  })

  it('redacting twice finds nothing more', () => {
    const unit = fc.constantFrom(...'0123456789.,:; -abcf/PTVsk_'.split(''), ' path ', ' 10.0.0.5', ' 482913', ' fe80::1', ` ${KEY}`)
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 40 }), (text) => {
        const once = redact(text)
        const twice = redact(once.text)
        return twice.text === once.text && totalRedactions(twice.counts) === 0
      }),
      { numRuns: 500 },
    )
  })

  it('no placeholder is itself redacted', () => {
    const placeholders = REDACTION_KINDS.map((kind) => REDACTION_PLACEHOLDERS[kind]).join(' ')
    assert.deepEqual(redact(placeholders), { text: placeholders, counts: NONE })
  })
})
