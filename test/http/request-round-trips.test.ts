// Issue 29: the database round trips of one authenticated request on PostgreSQL, counted at the driver (every
// pg query is one round trip: the extended protocol sends parse/bind/execute/sync together). Row-level security
// needs the organisation set on the connection (`set_config`, session level) before a tenant query; it is sent
// only when the connection last served another organisation, and no transaction wraps a single read; a read of the
// pool's direct path goes with the other reads of its turn and its scope's setting in one batch (db/pg-pool.ts). So a
// steady-state authenticated read costs exactly one round trip, also after another organisation's request, and a
// refused unknown key none at all.
import assert from 'node:assert/strict'
import { AsyncLocalStorage } from 'node:async_hooks'
import { type IncomingMessage, request, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import pg from 'pg'
import { batchedStatements } from '../../src/db/pg-pool.ts'
import { harness, invalidationsSettled, testDialects, type Harness } from '../harness.ts'

const counting = new AsyncLocalStorage<string[]>()
/** The counting contexts of requests sent and not yet received by the server, in order (one request at a time here). */
const waiting: string[][] = []
const query = pg.Client.prototype.query
// Only the queries made inside `counted` are recorded (background jobs and other tests' requests are not). A query's
// callback runs where pg's socket read its answer, outside any request's context: it is run in the context of the
// query that registered it, so that a query issued from it (the pool's read after the scope's set_config) counts.
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const text = args[0]
  const store = counting.getStore()
  // One query is one round trip; a batch of the pool's reusable reads is one, its statements on lines of their own.
  store?.push(batchedStatements(text)?.join('\n') ?? (typeof text === 'string' ? text : String((text as { text?: string }).text)))
  const last = args.length - 1
  const callback = args[last]
  if (store && typeof callback === 'function')
    args[last] = (...results: unknown[]) => counting.run(store, () => (callback as (...r: unknown[]) => unknown)(...results))
  return (query as (...a: unknown[]) => unknown).apply(this, args)
} as typeof query

async function counted<T>(run: () => Promise<T>): Promise<{ result: T; queries: string[] }> {
  const queries: string[] = []
  const result = await counting.run(queries, run)
  return { result, queries }
}

/**
 * Serves `h.app` over a real socket with each request's handler run inside its sender's counting context (inject
 * does not carry the caller's async context into the request); returns a sender of one request at a time.
 */
async function serve(h: Harness) {
  await h.app.listen({ host: '127.0.0.1', port: 0 })
  const handler = h.app.server.listeners('request')[0] as (req: IncomingMessage, res: ServerResponse) => void
  h.app.server.removeListener('request', handler)
  h.app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const store = waiting.shift()
    return store ? counting.run(store, () => handler(req, res)) : handler(req, res)
  })
  const port = (h.app.server.address() as AddressInfo).port
  return (method: string, path: string, who: { org: { slug: string }; key: string }, body?: unknown) => {
    const store = counting.getStore()
    if (store) waiting.push(store)
    return new Promise<{ statusCode: number }>((resolve, reject) => {
      const headers = { host: `${who.org.slug}.localhost`, 'x-api-key': who.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }
      request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
        res.resume().on('end', () => resolve({ statusCode: res.statusCode! }))
      })
        .on('error', reject)
        .end(body === undefined ? undefined : JSON.stringify(body))
    })
  }
}

if (testDialects().includes('postgres'))
  describe('postgres: round trips of one authenticated request (issue 29)', () => {
    it('a cached authenticated read is one round trip, its scope included after another organisation; a refused unknown key none', async (t) => {
      // One pooled connection: which connection serves a request is then known; no last-used flush during the counts.
      const h = await harness(t, 'postgres', { SITEGRID_LAST_USED_FLUSH_MS: '60000' }, { appPoolSize: 1 })
      const send = await serve(h)
      const a = await h.orgWithKey('admin')
      const b = await h.orgWithKey('admin')
      await invalidationsSettled(h.handle) // the mints' notifications, heard late, dropped the caches mid-count
      const list = (who: { org: { slug: string }; key: string }) => send('GET', '/api/admin/api-keys', who)

      assert.equal((await list(a)).statusCode, 200) // warms the tenancy, the key and the scope of the connection
      const steady = await counted(() => list(a))
      assert.equal(steady.result.statusCode, 200)
      assert.equal(steady.queries.length, 1, `one round trip, got ${JSON.stringify(steady.queries)}`)
      assert.match(steady.queries[0]!, /api_keys/)

      const unknown = { org: a.org, key: `csk_${'Z'.repeat(32)}` }
      assert.equal((await list(unknown)).statusCode, 401)
      const refused = await counted(() => list(unknown))
      assert.equal(refused.result.statusCode, 401)
      assert.deepEqual(refused.queries, [], 'a known-unknown key is refused without a query')

      assert.equal((await list(b)).statusCode, 200)
      const switched = await counted(() => list(a))
      assert.equal(switched.result.statusCode, 200)
      assert.equal(switched.queries.length, 1, `one round trip: ${JSON.stringify(switched.queries)}`)
      assert.match(switched.queries[0]!, /^select set_config\(.*\n.*api_keys/, 'the scope, then the read, in one batch')
    })

    it('a controller create is one statement: the controller and its audit row together, no transaction', async (t) => {
      const h = await harness(t, 'postgres', { SITEGRID_LAST_USED_FLUSH_MS: '60000' }, { appPoolSize: 1 })
      const send = await serve(h)
      const a = await h.orgWithKey('admin')
      assert.equal((await send('POST', '/api/sites', a, { code: 'S1', name: 'Plant' })).statusCode, 201)
      // The site's creation announces an invalidation (NOTIFY): heard during the first read at the latest, so the
      // second read warms what it dropped before anything is counted.
      for (let i = 0; i < 2; i++) assert.equal((await send('GET', '/api/sites/S1', a)).statusCode, 200)
      const body = (i: number) => ({ name: `PLC ${i}`, platform: 1, assetNumber: `PLC-${i}`, connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.1' } })
      const made = await counted(() => send('POST', '/api/sites/S1/controllers', a, body(1)))
      assert.equal(made.result.statusCode, 201)
      assert.equal(made.queries.length, 1, `one round trip, got ${JSON.stringify(made.queries)}`)
      assert.match(made.queries[0]!, /^with written as \(insert into "controllers"[\s\S]*insert into audit_events/)
      const taken = await counted(() => send('POST', '/api/sites/S1/controllers', a, body(1)))
      assert.equal(taken.result.statusCode, 409)
      assert.equal(taken.queries.length, 1)
    })
  })
