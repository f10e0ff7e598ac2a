// Issue 3, issue 29: an authenticated GET /api/admin/api-keys by X-Api-Key, the same with a malformed and an unknown
// key, against bare node:http and Fastify alone (bench/servers/bare-fastify.ts: one route answering the same list
// through a response schema, no logger, hook or database: the framework's own cost, which no route of the service
// can go below) in the same run; then the verification cost on its own (in process, cached and uncached). Every
// figure BENCH_RUNS times: the median, the spread and the 1-minute load. The figure to read is the server's CPU per
// request (bench/lib.ts requestsPerSecond): the load generator shares the cores, so throughput moves with the load.
import { randomBytes } from 'node:crypto'
import { createApiKeyValidator } from '../src/auth/api-key-validator.ts'
import { CLI_ACTOR } from '../src/identity.ts'
import { systemClock } from '../src/clock.ts'
import { connectDatabase } from '../src/db/connect.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { createApiKeysService } from '../src/modules/api-keys/service.ts'
import { verifierOf } from '../src/modules/api-keys/plaintext.ts'
import { createOrgsService } from '../src/modules/orgs/service.ts'
import { appRoleUrl, ensureAppRole } from '../test/postgres.ts'
import { benchRuns, cpuRatios, type HttpFigures, loadSpread, measureHttp, medianWithSpread, printHttpFigure, startBenchServer, stopBenchServer } from './lib.ts'

export async function benchApiKeys(dialects: Array<{ name: string; url?: string }>, seconds: number): Promise<void> {
  const { figures, loads } = await benchRuns(async () => {
    const run: HttpFigures = {}
    const path = '/api/admin/api-keys'
    await measureHttp(run, 'bare node:http', await startBenchServer('bare.ts'), path, () => ({ 'x-api-key': 'x' }), seconds)
    await measureHttp(run, 'bare Fastify', await startBenchServer('bare-fastify.ts'), path, () => ({ 'x-api-key': 'x' }), seconds)
    for (const dialect of dialects) {
      // PostgreSQL: the application runs as the app role, so that row-level security applies (a superuser passes it).
      if (dialect.url) await ensureAppRole(dialect.url)
      const app = await startBenchServer('app.ts', dialect.url ? { BENCH_DATABASE_URL: dialect.url, BENCH_DATABASE_APP_URL: appRoleUrl(dialect.url) } : {})
      try {
        const host = app.info.host!
        await measureHttp(run, `${dialect.name} authenticated GET`, app, path, () => ({ host, 'x-api-key': app.info.key! }), seconds, false)
        await measureHttp(run, `${dialect.name} malformed key 401`, app, path, () => ({ host, 'x-api-key': 'csk_malformed' }), seconds, false)
        await measureHttp(run, `${dialect.name} unknown key 401`, app, path, () => ({ host, 'x-api-key': `csk_${'Z'.repeat(32)}` }), seconds, false)
      } finally {
        await stopBenchServer(app)
      }
    }
    return run
  })
  console.log(`# api keys: ${loadSpread(loads)}; server CPU µs per request, and bare Fastify's CPU ÷ this one (the aim's ratio)`)
  for (const label of [
    'bare node:http',
    'bare Fastify',
    ...dialects.flatMap((d) => ['authenticated GET', 'malformed key 401', 'unknown key 401'].map((w) => `${d.name} ${w}`)),
  ])
    printHttpFigure(figures, label, 'bare Fastify')
  if (figures['sqlite unknown key 401 cpu'] && figures['postgres unknown key 401 cpu']) {
    const ratios = cpuRatios(figures, 'sqlite unknown key 401', 'postgres unknown key 401')
    console.log(`postgres unknown key 401: CPU ÷ sqlite's ${medianWithSpread(ratios, (n) => `${n.toFixed(2)}x`)} (aim ≤ 1.2x)`)
  }
  await verificationCost()
}

async function verificationCost(): Promise<void> {
  const handle = await connectDatabase('sqlite::memory:')
  await migrateToLatest(handle.db)
  const secret = randomBytes(32)
  const org = await createOrgsService({ handle, clock: systemClock }).provision('verify')
  const apiKeys = createApiKeysService({ handle, clock: systemClock, keySecret: secret })
  const key = await apiKeys.mint(org.id, CLI_ACTOR, { role: 'owner', name: 'v', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })
  const validate = createApiKeyValidator({ handle, clock: systemClock, keys: apiKeys, onUse: () => {} })
  const n = 200_000
  let t = process.hrtime.bigint()
  for (let i = 0; i < n; i++) verifierOf(secret, key.plaintext)
  const hmacNs = Number(process.hrtime.bigint() - t) / n
  t = process.hrtime.bigint()
  for (let i = 0; i < n; i++) await validate(key.plaintext, org.id, '127.0.0.1')
  const cachedNs = Number(process.hrtime.bigint() - t) / n
  const m = 20_000
  t = process.hrtime.bigint()
  for (let i = 0; i < m; i++) {
    handle.invalidateLocally() // force the database path every time
    await validate(key.plaintext, org.id, '127.0.0.1')
  }
  const uncachedNs = Number(process.hrtime.bigint() - t) / m
  console.log(
    `api-key verify  HMAC ${(hmacNs / 1000).toFixed(2)} µs   cached ${(cachedNs / 1000).toFixed(2)} µs   uncached (SQLite) ${(uncachedNs / 1000).toFixed(2)} µs   uncached/cached ${(uncachedNs / cachedNs).toFixed(2)}x`,
  )
  await handle.close()
}
