import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../harness.ts'

const JSON_TYPE = { 'content-type': 'application/json' }

for (const dialect of testDialects()) {
  describe(`${dialect}: a JSON content type with no content (RFC 9110 §8.6: Content-Length 0 is no content)`, () => {
    it('is an absent body: accepted where the JSON body is optional, a 400 naming the body where it is required, never MalformedBody or a 5xx', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('owner')
      const as = (method: 'POST' | 'DELETE', url: string) => h.inject({ org, apiKey: key }, { method, url, headers: JSON_TYPE, payload: '' })
      // Optional bodies (spec 4.1 revoke's reason, 4.5 reload's reason): as without a body at all.
      const victim = await h.mintKey(org, 'member')
      assert.equal((await as('DELETE', `/api/admin/api-keys/${victim.keyId}`)).statusCode, 204)
      assert.equal((await as('DELETE', `/api/admin/api-keys/${victim.keyId}`)).statusCode, 404, 'already revoked')
      const reload = await as('POST', '/api/admin/config/reload')
      assert.equal(reload.statusCode, 200, reload.body)
      // A route of no body.
      assert.equal((await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/sites', payload: { code: 'S1', name: 'Plant' } })).statusCode, 201)
      assert.equal((await as('DELETE', '/api/sites/S1?confirm=S1')).statusCode, 204)
      // Required bodies: the body is missing, which the validation names.
      for (const url of ['/api/sites', '/api/admin/api-keys', '/api/sites/S2/instances/bulk']) {
        const res = await as('POST', url)
        assert.equal(res.statusCode, 400, `${url}: ${res.body}`)
        assert.equal(res.json().code, 'ValidationFailed')
        assert.equal(res.json().errors[0].pointer, '')
      }
      // Whitespace is not empty: it is not JSON either.
      const blank = await h.inject(
        { org, apiKey: key },
        { method: 'DELETE', url: `/api/admin/api-keys/${(await h.mintKey(org, 'member')).keyId}`, headers: JSON_TYPE, payload: ' ' },
      )
      assert.equal(blank.statusCode, 400)
      assert.equal(blank.json().code, 'MalformedBody')
    })
  })
}
