import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCipPath } from './cip-path.ts'

describe('CIP route check', () => {
  it('reads backplane slots and Ethernet hops in words', () => {
    const r = parseCipPath('2,10.0.0.5,1,0')
    assert.ok(r.ok)
    assert.deepEqual(
      r.hops.map((h) => h.meaning),
      ['out port 2 (Ethernet) to 10.0.0.5', 'backplane, slot 0'],
    )
    assert.match(r.explanation, /Ethernet\) to 10\.0\.0\.5, then backplane, slot 0/)
    const local = parseCipPath(' 1, 3 ')
    assert.ok(local.ok)
    assert.equal(local.hops[0]!.meaning, 'backplane, slot 3')
  })

  it('an empty route is a direct connection', () => {
    const r = parseCipPath('')
    assert.ok(r.ok)
    assert.equal(r.hops.length, 0)
  })

  it('a DH+/ControlNet node number is a valid link on a network port', () => {
    const r = parseCipPath('1,2,3,14,1,0')
    assert.ok(r.ok)
    assert.match(r.hops[1]!.meaning, /network node 14/)
  })

  const refused: Array<[string, RegExp]> = [
    ['1', /hop 1 .* no link/],
    ['1,0,2', /hop 2 .* no link/],
    ['1,17', /hop 1 .*slot number 0 to 16/],
    ['1,10.0.0.5', /hop 1 .*backplane/],
    ['0,1', /hop 1 .*port must be/],
    ['65536,1', /hop 1 .*port must be/],
    ['x,1', /hop 1/],
    ['1,0,2,10.0.0.300', /hop 2 .*IPv4/],
    ['1,0,2,plc.local', /hop 2 .*IPv4/],
    ['2,256', /hop 1 .*node number 0 to 255/],
    ['1,0,,0', /hop 2/],
    ['1,-1', /hop 1/],
  ]
  for (const [path, message] of refused) {
    it(`refuses "${path}" naming the hop`, () => {
      const r = parseCipPath(path)
      assert.equal(r.ok, false)
      if (!r.ok) assert.match(r.message, message)
    })
  }

  it('refuses more than 16 hops', () => {
    assert.equal(parseCipPath(Array.from({ length: 17 }, () => '1,0').join(',')).ok, false)
    assert.equal(parseCipPath(Array.from({ length: 16 }, () => '1,0').join(',')).ok, true)
  })
})
