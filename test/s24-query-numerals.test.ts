// Session 24: a number in a query string is read from decimal digits only. Ajv's coercion took any text JavaScript
// reads as a number (`0x10` as 16, `1e1` as 10, ` 12 ` as 12, `1.0` as an integer, `0b11` as 3).
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from './harness.ts'
import { NO_RATE_LIMIT } from './hardening/support.ts'

describe('numbers in query strings', () => {
  it('an integer parameter written other than in decimal digits is 400 ValidationFailed naming it; decimal digits are read as before', async (t) => {
    const h = await harness(t, testDialects()[0]!, NO_RATE_LIMIT)
    const { org, key } = await h.orgWithKey()
    for (const code of ['PLANT1', 'PLANT2', 'PLANT3']) {
      const created = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/sites', payload: { code, name: code } })
      assert.equal(created.statusCode, 201, created.body)
    }
    const list = (limit: string) => h.inject({ org, apiKey: key }, { method: 'GET', url: `/api/sites?limit=${limit}` })
    for (const limit of ['0x2', '2e0', '%202%20', '2.0', '0b10', '+2', '0o2', '2n', '']) {
      const res = await list(limit)
      assert.equal(res.statusCode, 400, `limit=${limit}: ${res.body}`)
      const problem = res.json<{ code: string; errors: unknown[] }>()
      assert.equal(problem.code, 'ValidationFailed')
      assert.deepEqual(problem.errors, [{ in: 'query', pointer: '/limit', message: 'must be integer, written in decimal digits' }], `limit=${limit}`)
    }
    const two = await list('2')
    assert.equal(two.statusCode, 200)
    assert.equal(two.json<{ items: unknown[] }>().items.length, 2)
    assert.equal((await list('002')).json<{ items: unknown[] }>().items.length, 2, 'leading zeros are still decimal digits')
    const below = await list('-1')
    assert.equal(below.statusCode, 400)
    assert.match(JSON.stringify(below.json<{ errors: unknown[] }>().errors), /"pointer":"\/limit","message":"must be >= 1"/, 'the bound is checked after')
  })
})
