// Session 23 (streams and shutdown): the tenant package export, a download streamed as it is read, over a real socket.
// 50 clients that go away mid-download leave nothing behind: the pool idle, no timer, the server serving. (A database
// failure after the headers: tenant-transfer/export-errors.test.ts; a table renamed under a paused download here was
// a race with the server's own pace, not a check.)
import assert from 'node:assert/strict'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { gunzipSync } from 'node:zlib'
import { sql } from 'kysely'
import { harness, sleep, testDialects, type Harness } from './harness.ts'
import { seedPlant } from './support/historian-upload.ts'

/**
 * Timers alive in this process. A PostgreSQL pool keeps one for each idle connection (the app's 4, the test's own 2),
 * so a leak shows as one timer for each of the 50 requests, far above POOL_TIMERS.
 */
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
const POOL_TIMERS = 6
const NO_RATE_LIMIT = { SITEGRID_RATE_LIMIT_PER_MINUTE: '100000000', SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE: '100000000' }
/** Instances with 400 random hex characters in their area: a package of ~10 MB that gzip cannot shrink much. */
const INSTANCES = 25_000

/** An organisation with one site of INSTANCES instances, written directly; its owner key. */
async function bigTenant(h: Harness): Promise<{ slug: string; key: string }> {
  const { org, key } = await h.orgWithKey('owner')
  await seedPlant(h.handle.db, org.id, { siteCode: 'BIG', instances: [], at: Date.now() })
  const noise = h.dialect === 'postgres' ? sql`repeat(md5(random()::text), 12) || md5(i::text)` : sql`hex(randomblob(200))`
  await sql`insert into instances (org_id, site_code, id, name, type_id, type_version, asset_number, controller_id, area, tag_mappings, tag_count, config, created_at, updated_at)
    with recursive n(i) as (select 1 union all select i + 1 from n where i < ${INSTANCES})
    select ${org.id}, 'BIG', 'ins-' || i, 'instance ' || i, 'generic', null, 'I-' || i, 'plc-1', ${noise}, '{}', 0, '{}', 0, 0 from n`.execute(h.handle.db)
  return { slug: org.slug, key }
}

interface Download {
  status: number
  bytes: Buffer
  /** The response ended with its last chunk (res.complete), not cut off. */
  complete: boolean
  error?: string
}

/** GET the export; `stopAfter`: destroy the connection once this many body bytes arrived. */
function download(port: number, host: string, key: string, o: { stopAfter?: number } = {}) {
  return new Promise<Download>((resolve) => {
    const chunks: Buffer[] = []
    let received = 0
    const req = request(
      { host: '127.0.0.1', port, path: `/api/admin/orgs/${host.split('.')[0]}/tenant/export`, agent: false, headers: { host, 'x-api-key': key } },
      (res) => {
        const done = (error?: string) =>
          resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks), complete: res.complete, ...(error ? { error } : {}) })
        res.on('data', (d: Buffer) => {
          chunks.push(d)
          received += d.length
          if (o.stopAfter !== undefined && received >= o.stopAfter) req.destroy()
        })
        res.on('end', () => done())
        res.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message))
        res.on('close', () => done('closed'))
      },
    )
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: 0, bytes: Buffer.concat(chunks), complete: false, error: err.code ?? err.message }))
    req.end()
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: the tenant export on a real socket`, () => {
    it('50 downloads cut off by their clients mid-stream leave the pool idle, no timer behind, and the server serving', async (t) => {
      const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_LOG_LEVEL: 'warn' })
      const { slug, key } = await bigTenant(h)
      await h.app.listen({ host: '127.0.0.1', port: 0 })
      const { port } = h.app.server.address() as AddressInfo
      const host = `${slug}.localhost`
      const whole = await download(port, host, key)
      assert.equal(whole.status, 200)
      assert.ok(whole.complete)
      const timersBefore = timers()
      for (let round = 0; round < 5; round++) {
        const cut = await Promise.all(Array.from({ length: 10 }, () => download(port, host, key, { stopAfter: 64 * 1024 })))
        for (const d of cut) assert.equal(d.status, 200)
      }
      await sleep(500)
      const pool = h.appHandle.poolStats()
      assert.equal(pool.waiting, 0)
      assert.equal(pool.idle, pool.open, `connections still lent after the aborts: ${JSON.stringify(pool)}`)
      const timersAfter = timers()
      assert.ok(timersAfter <= timersBefore + POOL_TIMERS, `timers: ${timersBefore} before, ${timersAfter} after 50 requests`)
      const again = await download(port, host, key)
      assert.ok(again.complete)
      assert.equal(gunzipSync(again.bytes).length, gunzipSync(whole.bytes).length)
    })
  })
}
