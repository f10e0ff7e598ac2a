// Session 24: a path that exists, asked with a method it does not take, answers 405 MethodNotAllowed with `Allow`
// (RFC 9110 §15.5.6) — the catalog had the code, no answer used it: every such request was a 404 "No such resource".
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from './harness.ts'
import { NO_RATE_LIMIT } from './hardening/support.ts'

describe('methods a path does not take', () => {
  it('405 with the Allow header listing what the path takes, credential or not; an unknown path stays 404; nothing changed', async (t) => {
    const h = await harness(t, testDialects()[0]!, NO_RATE_LIMIT)
    const { org, key } = await h.orgWithKey()
    assert.equal((await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/sites', payload: { code: 'PLANT1', name: 'Plant 1' } })).statusCode, 201)
    const cases: Array<[string, string, string]> = [
      ['DELETE', '/api/sites', 'GET, HEAD, POST'],
      ['POST', '/api/sites/PLANT1', 'GET, HEAD, PUT, DELETE'],
      ['PATCH', '/api/sites/PLANT1/', 'GET, HEAD, PUT, DELETE'],
      ['POST', '/openapi.json', 'GET, HEAD'],
      ['OPTIONS', '/api/sites?limit=1', 'GET, HEAD, POST'],
    ]
    for (const credential of [{ org, apiKey: key }, undefined]) {
      for (const [method, url, allow] of cases) {
        const res = await h.inject(credential, { method: method as 'GET', url, payload: method === 'OPTIONS' ? undefined : {} })
        assert.equal(res.statusCode, 405, `${method} ${url}: ${res.body}`)
        assert.equal(res.headers.allow, allow, `${method} ${url}`)
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
        const problem = res.json<{ code: string; detail: string }>()
        assert.equal(problem.code, 'MethodNotAllowed')
        assert.equal(problem.detail, `This path takes ${allow}, not ${method}.`)
      }
    }
    const sites = await h.inject({ org, apiKey: key }, { method: 'GET', url: '/api/sites' })
    assert.deepEqual(
      sites.json<{ items: Array<{ code: string }> }>().items.map((s) => s.code),
      ['PLANT1'],
      'the site is still there',
    )
    const unknown = await h.inject({ org, apiKey: key }, { method: 'DELETE', url: '/api/nothing-here' })
    assert.equal(unknown.statusCode, 404)
    assert.equal(unknown.headers.allow, undefined)
    const page = await h.app.inject({ method: 'GET', url: '/problems/MethodNotAllowed' })
    assert.equal(page.statusCode, 200)
  })
})
