import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeProtectedHeader } from 'jose'
import { comparableBody, harness, testDialects } from '../../../test/harness.ts'
import { CHEAP_PINS, signedIn } from '../../../test/site/support.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: the local bearer validator reads the unsigned header's kid before any signature`, () => {
    it('a kid that is no thumbprint (a NUL, a lone surrogate, 2 000 characters, empty) is the uniform 401, never a 500', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const s = await signedIn(h, org, 'owner')
      const url = '/api/site/users'
      const reference = await h.inject(undefined, { url, host: `${org.slug}.localhost` })
      const [, payload, signature] = s.accessToken.split('.') as [string, string, string]
      const header = decodeProtectedHeader(s.accessToken)
      const withKid = (kid: string) => `${Buffer.from(JSON.stringify({ ...header, kid })).toString('base64url')}.${payload}.${signature}`
      for (const kid of ['a\u0000b', `${header.kid!.slice(0, 42)}\u0000`, 'a\ud800b', 'k'.repeat(2000), '']) {
        const res = await h.inject({ org, bearer: withKid(kid) }, { url })
        assert.equal(res.statusCode, 401, `${JSON.stringify(kid.slice(0, 50))}: ${res.body}`)
        assert.deepEqual(comparableBody(res.body), comparableBody(reference.body))
      }
      assert.equal((await h.inject({ org, bearer: s.accessToken }, { url })).statusCode, 200, 'the token with its own kid still signs in')
    })
  })
}
