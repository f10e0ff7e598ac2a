import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { base64url } from 'jose'
import { peekIssuer } from './peek-issuer.ts'

const segment = (value: unknown) => base64url.encode(JSON.stringify(value))
const jws = (payload: unknown) => `${segment({ alg: 'RS256' })}.${segment(payload)}.c2ln`

describe('peekIssuer (unverified, for routing only)', () => {
  it('reads iss from a compact JWS payload', () => {
    assert.equal(peekIssuer(jws({ iss: 'https://login.example/v2.0', sub: 'x' })), 'https://login.example/v2.0')
  })

  const malformed: [string, unknown][] = [
    ['a non-string', 42],
    ['an oversized token', jws({ iss: 'https://login.example', pad: 'x'.repeat(20_000) })],
    ['two segments', `${segment({ alg: 'RS256' })}.${segment({ iss: 'a' })}`],
    ['a five-segment JWE', `a.b.${segment({ iss: 'a' })}.d.e`],
    ['a payload that is not base64url', `${segment({})}.!!!.sig`],
    ['a payload that is not JSON', `${segment({})}.${base64url.encode('not json')}.sig`],
    ['a JSON array payload', jws([{ iss: 'x' }])],
    ['a numeric iss', jws({ iss: 7 })],
    ['an empty iss', jws({ iss: '' })],
    ['no iss at all', jws({ sub: 'x' })],
    ['an empty header segment', `.${segment({ iss: 'a' })}.sig`],
  ]
  for (const [what, token] of malformed) {
    it(`${what} gives undefined`, () => {
      assert.equal(peekIssuer(token), undefined)
    })
  }
})
