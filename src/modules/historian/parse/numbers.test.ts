import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { isNumberLike, numberProblem, parseDecimal } from './numbers.ts'

describe('parseDecimal', () => {
  it('reads point decimals, signs, exponents and surrounding spaces', () => {
    assert.equal(parseDecimal('21.015512466', '.'), 21.015512466)
    assert.equal(parseDecimal('-9999.000000000', '.'), -9999)
    assert.equal(parseDecimal('+3.5', '.'), 3.5)
    assert.equal(parseDecimal('1.5E+03', '.'), 1500)
    assert.equal(parseDecimal(' 12 ', '.'), 12)
    assert.equal(parseDecimal('.5', '.'), 0.5)
    assert.equal(parseDecimal('5.', '.'), 5)
  })

  it('accepts a decimal comma only when the comma is the mark (or either is allowed)', () => {
    assert.equal(parseDecimal('48,5', ','), 48.5)
    assert.equal(parseDecimal('48,5', 'either'), 48.5)
    assert.ok(Number.isNaN(parseDecimal('48,5', '.')))
    assert.ok(Number.isNaN(parseDecimal('48.5', ',')))
  })

  it('refuses thousands separators, NaN, Infinity, hex and the empty string', () => {
    for (const text of ['1,234.5', '1.234,5', '1 234', '1.234.567', 'NaN', 'Inf', 'Infinity', '-Infinity', '0x1F', '', ' ', '-', '1e', '12abc']) {
      assert.ok(Number.isNaN(parseDecimal(text, 'either')), text)
    }
  })

  it('gives exactly what Number() gives for every decimal rendering of a double', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 }), fc.integer({ min: 0, max: 12 }), (d, digits) => {
        for (const text of [String(d), d.toFixed(digits)]) {
          if (/e/i.test(text)) continue
          const got = parseDecimal(text, '.')
          assert.ok(got === Number(text), `${text}: ${got} !== ${Number(text)}`)
        }
      }),
      { numRuns: 2000 },
    )
  })
})

describe('numberProblem', () => {
  it('names the thousands separator, NaN and a refused decimal comma', () => {
    assert.match(numberProblem('1,234.5', 'either'), /thousands separator/)
    assert.match(numberProblem('NaN', '.'), /NaN\/Infinity/)
    assert.match(numberProblem('48,5', '.'), /decimal comma/)
  })

  it('treats words as text candidates and digits as numbers', () => {
    assert.equal(isNumberLike('Running'), false)
    assert.equal(isNumberLike('1,234'), true)
    assert.equal(isNumberLike('-inf'), true)
    assert.equal(isNumberLike('Low [Acknowledged]'), false)
  })
})
