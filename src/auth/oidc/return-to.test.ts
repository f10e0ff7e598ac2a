import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { safeReturnTo } from './return-to.ts'

describe('post-login returnTo', () => {
  for (const path of ['/', '/sites', '/sites/PLANT-1/alarms?state=open#top', '/a/../b']) {
    it(`the same-host absolute path ${JSON.stringify(path)} is kept`, () => {
      assert.equal(typeof safeReturnTo(path), 'string')
      assert.ok(safeReturnTo(path)?.startsWith('/'))
    })
  }

  const refused = [
    'https://evil.example/',
    'http:/evil.example',
    'javascript:alert(1)',
    '//evil.example',
    '/\\evil.example',
    '\\\\evil.example',
    '/sites\\..\\x',
    '/\t/evil.example',
    '/\n/evil.example',
    '/%2F/evil.example',
    '/%5cevil.example',
    '/.//evil.example',
    '/..//evil.example',
    '/a/..//evil.example',
    '/%2e//evil.example',
    '/%2E%2e//evil.example/x?y#z',
    'sites',
    '',
    ' /sites',
    `/${'a'.repeat(3000)}`,
  ]
  for (const value of refused) {
    it(`${JSON.stringify(value.slice(0, 40))} is refused`, () => {
      assert.equal(safeReturnTo(value), undefined)
    })
  }

  it('a non-string is refused', () => {
    assert.equal(safeReturnTo(['/sites']), undefined)
    assert.equal(safeReturnTo(undefined), undefined)
  })

  it('whatever is accepted resolves to the same origin and starts with a single slash', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), fc.constantFrom('', '/', '//', '/\\', '\\', '/.//', '/a/..//', '/%2e//'), (tail, head) => {
        const accepted = safeReturnTo(`${head}${tail}`)
        if (accepted === undefined) return
        assert.equal(new URL(accepted, 'https://acme.sitegrid.test').origin, 'https://acme.sitegrid.test')
        assert.match(accepted, /^\/(?![/\\])/)
      }),
      { numRuns: 2000 },
    )
  })
})
