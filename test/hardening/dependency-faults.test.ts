// Issue 14, dependency faults: a loopback TCP proxy (test/support/tcp-proxy.ts) sits between a real `sitegrid serve`
// process and PostgreSQL. With latency requests still succeed; during a blackhole or a reset every request fails
// with 503 `ServiceUnavailable` (none left hanging past the configured timeouts), a multi-row write in flight (a tenant
// import of TENANT_SITES sites, one transaction) is all or nothing, and once the fault heals the pool recovers within
// a bounded number of requests. PostgreSQL only: SQLite has no network between the service and its database.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../harness.ts'
import { startServer } from '../cli/process.ts'
import { waitHealthy } from '../support/historian-upload.ts'
import { startTcpProxy, type ProxyMode } from '../support/tcp-proxy.ts'
import { processWorld, rawRequest, type ProcessWorld } from './process-support.ts'

const CONNECT_TIMEOUT_MS = 1000
const QUERY_TIMEOUT_MS = 1500
/** A request still unanswered this long after it was sent counts as hanging (several times the timeouts above). */
const HANG_MS = 4 * (CONNECT_TIMEOUT_MS + 2 * QUERY_TIMEOUT_MS)
const TENANT_SITES = 500
const CONCURRENT = 20
/** Requests allowed to fail after the fault healed before one succeeds. */
const RECOVERY_BOUND = 10

async function bulkSites(w: ProcessWorld): Promise<number> {
  const row = await w.handle.db
    .selectFrom('sites')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', w.orgId)
    .where('code', 'like', 'bulk-%')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The request's status and problem code, 0 if the connection failed, -1 if it hung past HANG_MS. */
async function timed(call: Promise<{ status: number; body: Buffer }>): Promise<{ status: number; code: string | undefined }> {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<{ status: number; code: undefined }>((resolve) => {
    timer = setTimeout(() => resolve({ status: -1, code: undefined }), HANG_MS)
  })
  const answer = call.then(
    (r) => {
      let code: string | undefined
      try {
        code = (JSON.parse(r.body.toString()) as { code?: string }).code
      } catch {
        /* a 2xx package or list */
      }
      return { status: r.status, code }
    },
    () => ({ status: 0, code: undefined }),
  )
  const result = await Promise.race([answer, hang])
  clearTimeout(timer)
  return result
}

const tally = (results: Array<{ status: number; code: string | undefined }>) => {
  const counts = new Map<string, number>()
  for (const r of results) counts.set(`${r.status}${r.code ? ` ${r.code}` : ''}`, (counts.get(`${r.status}${r.code ? ` ${r.code}` : ''}`) ?? 0) + 1)
  return [...counts.entries()]
    .sort()
    .map(([k, n]) => `${n}×${k}`)
    .join(', ')
}

if (testDialects().includes('postgres')) {
  describe('postgres: dependency faults between the service and the database', () => {
    it('latency: requests succeed; blackhole and reset: 503 within the timeouts, the import all or nothing, the pool recovers', async (t) => {
      const w = await processWorld(t, 'postgres', 'faults')
      const pgUrl = new URL(w.databaseUrl)
      const proxy = await startTcpProxy({ host: pgUrl.hostname, port: Number(pgUrl.port) })
      t.after(() => proxy.close())
      const server = await startServer({
        cwd: w.cwd,
        env: {
          ...w.env,
          DATABASE_URL: proxy.rewrite(w.databaseUrl),
          SITEGRID_MIGRATE_ON_START: 'false',
          // The service's own connections (the application role under row-level security) go through the proxy.
          ...(w.env.SITEGRID_DATABASE_APP_URL ? { SITEGRID_DATABASE_APP_URL: proxy.rewrite(w.env.SITEGRID_DATABASE_APP_URL) } : {}),
          SITEGRID_DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
          SITEGRID_DB_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
          SITEGRID_DB_STATEMENT_TIMEOUT_MS: '5000',
        },
      })
      t.after(() => server.stop('SIGKILL'))
      await waitHealthy(server)
      const host = { host: `${w.slug}.localhost`, 'x-api-key': w.ownerKey }
      const list = () => rawRequest(`${server.url}/api/sites?limit=5`, { headers: host })
      const stage = (body: Buffer) =>
        rawRequest(`${server.url}/api/admin/orgs/${w.slug}/tenant/import/package`, {
          method: 'PUT',
          headers: { ...host, 'content-type': 'application/gzip' },
          body,
        })
      const apply = () => rawRequest(`${server.url}/api/admin/orgs/${w.slug}/tenant/import?force=true`, { method: 'POST', headers: host })

      // The package: TENANT_SITES sites, exported and then removed, so that applying it writes them all in one transaction.
      const now = Date.now()
      await w.handle.db
        .insertInto('sites')
        .values(
          Array.from({ length: TENANT_SITES }, (_, i) => ({
            org_id: w.orgId,
            code: `bulk-${String(i).padStart(4, '0')}`,
            name: `Bulk ${i}`,
            description: null,
            location: null,
            time_zone: 'UTC',
            status: 0,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute()
      const pkg = await rawRequest(`${server.url}/api/admin/orgs/${w.slug}/tenant/export`, { headers: host })
      assert.equal(pkg.status, 200)
      await w.handle.db.deleteFrom('sites').where('org_id', '=', w.orgId).where('code', 'like', 'bulk-%').execute()

      const latency = async () => {
        proxy.setMode('latency', { latencyMs: 50 })
        const results = await Promise.all(Array.from({ length: CONCURRENT }, () => timed(list())))
        proxy.setMode('pass')
        console.log(`# dependency faults: latency 50 ms: ${tally(results)}`)
        assert.equal(results.filter((r) => r.status === 200).length, CONCURRENT, 'with latency every request succeeds')
      }

      const fault = async (mode: Exclude<ProxyMode, 'pass' | 'latency'>) => {
        assert.equal((await stage(pkg.body)).status, 200, 'staged while healthy')
        for (let i = 0; i < 5; i++) assert.equal((await list()).status, 200, 'warm pool before the fault')
        proxy.setMode(mode)
        const reads = Array.from({ length: CONCURRENT }, () => timed(list()))
        const writes = Array.from({ length: 5 }, (_, i) =>
          timed(
            rawRequest(`${server.url}/api/sites`, {
              method: 'POST',
              headers: { ...host, 'content-type': 'application/json' },
              body: JSON.stringify({ code: `${mode}-${i}`, name: 'During the fault', timeZone: 'UTC' }),
            }),
          ),
        )
        const importing = timed(apply())
        const results = await Promise.all([...reads, ...writes, importing])
        const imported = await bulkSites(w)
        proxy.setMode('pass')
        let attempts = 0
        let healed = false
        while (!healed && attempts < RECOVERY_BOUND) {
          attempts++
          healed = (await timed(list())).status === 200
        }
        const after = await Promise.all(Array.from({ length: CONCURRENT }, () => timed(list())))
        const faultWrites = await w.handle.db.selectFrom('sites').select('code').where('org_id', '=', w.orgId).where('code', 'like', `${mode}-%`).execute()
        const failedWrites = (await Promise.all(writes)).filter((r) => r.status !== 201).length
        const hanging = results.filter((r) => r.status === -1).length
        const not503 = results.filter((r) => r.status !== 503 || r.code !== 'ServiceUnavailable').length
        console.log(
          `# dependency faults: ${mode}: ${results.length} requests during the fault: ${tally(results)}; ${hanging} hanging past ${HANG_MS} ms; tenant import rows ${imported}/${TENANT_SITES} (0 or all); ${faultWrites.length} refused site writes stored; healed after ${attempts} request(s) (bound ${RECOVERY_BOUND}); then ${after.filter((r) => r.status === 200).length}/${CONCURRENT} × 200; proxy ${JSON.stringify(proxy.stats())}`,
        )
        assert.equal(hanging, 0, `no request hangs during a ${mode}`)
        assert.equal(not503, 0, `every request during a ${mode} is a 503 ServiceUnavailable`)
        assert.ok(imported === 0 || imported === TENANT_SITES, 'the import in flight is all or nothing')
        assert.equal(faultWrites.length, 5 - failedWrites, 'a write is stored exactly when it was acknowledged')
        assert.ok(healed, `the pool recovered within ${RECOVERY_BOUND} requests after the ${mode} healed`)
        assert.equal(after.filter((r) => r.status === 200).length, CONCURRENT, 'after recovery every request succeeds')
      }

      await latency()
      await fault('blackhole')
      await fault('reset')
      const applied = await apply()
      assert.equal(applied.status, 200, `the package staged during the faults imports once healthy: ${applied.body.toString()}`)
      assert.equal(await bulkSites(w), TENANT_SITES)
    })
  })
}
