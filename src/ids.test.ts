import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { newId, newOrgId, ORG_ID_PATTERN } from './ids.ts'

// Ids take their random bytes from a pool refilled from the CSPRNG (issue 29): each byte is used once, across refills
// too, so no two ids share their random part.
describe('ids', () => {
  it('10 000 ids in one millisecond (about forty refills of the pool): each random part once, each id well formed', () => {
    const ids = Array.from({ length: 10_000 }, () => newId('ctl', 1_700_000_000_000))
    const randomParts = new Set(ids.map((id) => id.slice(-16)))
    assert.equal(randomParts.size, ids.length)
    for (const id of ids) assert.match(id, /^ctl_[0-9A-HJKMNP-TV-Z]{26}$/)
    assert.equal(new Set(ids.map((id) => id.slice(4, 14))).size, 1)
  })

  it('organisation ids between other ids draw fresh bytes too', () => {
    const orgs = Array.from({ length: 2_000 }, () => {
      newId('alm')
      return newOrgId()
    })
    for (const org of orgs) assert.match(org, ORG_ID_PATTERN)
    assert.equal(new Set(orgs).size, orgs.length)
  })
})
