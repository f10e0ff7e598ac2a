import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { rateBucket } from './auth.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const withHeaders = (headers: Record<string, string | undefined>) => ({ headers, ip: '192.0.2.7' })

describe('the rate limiter bucket of a request (http/auth.ts)', () => {
  it('names a credential by its last 64 characters at most, and a request without one by its address', () => {
    const key = `csk_${'k'.repeat(40)}`
    assert.equal(rateBucket(withHeaders({ 'x-api-key': key })), `c:${key}`)
    const token = `Bearer ${'h'.repeat(800)}${'s'.repeat(64)}`
    assert.equal(rateBucket(withHeaders({ authorization: token })), `c:${'s'.repeat(64)}`)
    assert.equal(rateBucket(withHeaders({ 'x-api-key': key, authorization: token })), `c:${key}`, 'the API key wins, as in authentication')
    assert.notEqual(rateBucket(withHeaders({ authorization: `${token.slice(0, -1)}t` })), rateBucket(withHeaders({ authorization: token })))
    assert.equal(rateBucket(withHeaders({})), 'ip:192.0.2.7')
  })

  it('keeps no header alive: 2 000 buckets of distinct 16 KiB headers hold kilobytes, not their 32 MB', () => {
    const buckets = new Map<string, number>()
    gc()
    const before = process.memoryUsage().heapUsed
    for (let i = 0; i < 2000; i += 1) {
      const bucket = rateBucket(withHeaders({ authorization: `Bearer ${randomBytes(12_000).toString('base64url')}` }))
      buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1)
    }
    gc()
    const grown = process.memoryUsage().heapUsed - before
    assert.equal(buckets.size, 2000)
    assert.ok(grown < 8_000_000, `the buckets hold ${grown} bytes`)
  })
})
