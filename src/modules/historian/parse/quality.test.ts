import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { avevaQuality, qualityFromText } from './quality.ts'

describe('qualityFromText', () => {
  it('maps percent good: 100 good, 0 bad, in between uncertain, above 100 unknown', () => {
    assert.equal(qualityFromText('100.0', 'percent'), 'good')
    assert.equal(qualityFromText('0.0', 'percent'), 'bad')
    assert.equal(qualityFromText('37.5', 'percent'), 'uncertain')
    assert.equal(qualityFromText('192', 'percent'), undefined)
  })

  it('maps OPC DA codes: 192 and up good, 64-191 uncertain, below 64 bad (low byte)', () => {
    assert.equal(qualityFromText('192', 'opc'), 'good')
    assert.equal(qualityFromText('216', 'opc'), 'good')
    assert.equal(qualityFromText('64', 'opc'), 'uncertain')
    assert.equal(qualityFromText('191', 'opc'), 'uncertain')
    assert.equal(qualityFromText('0', 'opc'), 'bad')
    assert.equal(qualityFromText('63', 'opc'), 'bad')
    assert.equal(qualityFromText('1.5', 'opc'), undefined)
  })

  it('maps words in any case: Ignition QualityCodes, PI statuses and states', () => {
    for (const word of ['good', 'GOOD', 'Good_Unspecified', 'Good_Provisional', 'OK']) assert.equal(qualityFromText(word, 'opc'), 'good', word)
    for (const word of ['Uncertain', 'Uncertain_LastKnownValue', 'Questionable', 'Substituted', 'Doubtful'])
      assert.equal(qualityFromText(word, 'opc'), 'uncertain', word)
    for (const word of ['bad', 'Bad_NotConnected', 'Error_Configuration', 'I/O Timeout', 'Shutdown', 'Comm Fail'])
      assert.equal(qualityFromText(word, 'opc'), 'bad', word)
  })

  it('returns undefined for an unknown word or an empty cell', () => {
    assert.equal(qualityFromText('Fancy', 'opc'), undefined)
    assert.equal(qualityFromText('', 'percent'), undefined)
  })
})

describe('avevaQuality', () => {
  it('reads Quality 0/1/16, then QualityDetail as OPC, then OPCQuality', () => {
    assert.equal(avevaQuality('0', '192', ''), 'good')
    assert.equal(avevaQuality('1', '24', ''), 'bad')
    assert.equal(avevaQuality('16', '64', ''), 'uncertain')
    assert.equal(avevaQuality('133', '150', ''), 'uncertain')
    assert.equal(avevaQuality('133', 'NULL', '0'), 'bad')
    assert.equal(avevaQuality('7', 'NULL', ''), undefined)
  })
})
