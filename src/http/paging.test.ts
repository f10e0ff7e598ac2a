import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../test/harness.ts'
import { encodeCursor } from './paging.ts'

const crafted = (key: unknown) => Buffer.from(JSON.stringify(key)).toString('base64url')

for (const dialect of testDialects()) {
  describe(`${dialect}: list cursors`, () => {
    it('a crafted cursor (a number past the largest double, a fraction, a NUL in a text) is a 400 naming /cursor, never a 500', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('owner')
      const as = { org, apiKey: key }
      assert.equal((await h.inject(as, { method: 'POST', url: '/api/sites', payload: { code: 'S1', name: 'Plant' } })).statusCode, 201)
      // The alarm list's cursor is [time, id]; 1e400 is JSON that JSON.parse reads as Infinity.
      for (const cursor of [
        Buffer.from('[1e400,"x"]').toString('base64url'),
        crafted([1.5, 'x']),
        crafted([-1e300, 'x']),
        crafted([1, 'a\u0000b']),
        crafted([1, '\uD800']),
      ]) {
        const res = await h.inject(as, { method: 'GET', url: `/api/sites/S1/alarms?cursor=${cursor}` })
        assert.equal(res.statusCode, 400, `${cursor}: ${res.body}`)
        assert.deepEqual(
          res.json().errors.map((e: { in: string; pointer: string }) => [e.in, e.pointer]),
          [['query', '/cursor']],
        )
      }
      const made = await h.inject(as, { method: 'GET', url: `/api/sites/S1/alarms?cursor=${encodeCursor([Date.now(), 'some-id'])}` })
      assert.equal(made.statusCode, 200, made.body)
    })
  })
}
