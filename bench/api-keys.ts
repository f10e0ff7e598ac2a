// Issue 3: an authenticated GET /api/admin/api-keys by X-Api-Key against bare node:http, the same with an invalid
// key, and the verification cost on its own (in process, cached and uncached). Also Fastify alone answering the same
// list (bench/servers/bare-fastify.ts): the framework's own cost, which no route of the service can go below.
import { randomBytes } from 'node:crypto'
import { createApiKeyValidator } from '../src/auth/api-key-validator.ts'
import { CLI_ACTOR } from '../src/identity.ts'
import { systemClock } from '../src/clock.ts'
import { connectDatabase } from '../src/db/connect.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { createApiKeysService } from '../src/modules/api-keys/service.ts'
import { verifierOf } from '../src/modules/api-keys/plaintext.ts'
import { createOrgsService } from '../src/modules/orgs/service.ts'
import { ratio, requestsPerSecond, startBenchServer, stopBenchServer } from './lib.ts'

export async function benchApiKeys(dialects: Array<{ name: string; url?: string }>, seconds: number): Promise<void> {
  const bare = await startBenchServer('bare.ts')
  const base = await requestsPerSecond(`http://127.0.0.1:${bare.info.port}/api/admin/api-keys`, { 'x-api-key': 'x' }, seconds, undefined, bare).finally(() =>
    stopBenchServer(bare),
  )
  console.log(`bare node:http            ${base.rps.toFixed(0)} req/s  p50 ${base.p50} ms  p99 ${base.p99} ms  ${cpu(base)}`)
  const framework = await startBenchServer('bare-fastify.ts')
  const ceiling = await requestsPerSecond(
    `http://127.0.0.1:${framework.info.port}/api/admin/api-keys`,
    { 'x-api-key': 'x' },
    seconds,
    undefined,
    framework,
  ).finally(() => stopBenchServer(framework))
  console.log(`bare Fastify (ceiling)    ${ceiling.rps.toFixed(0)} req/s  vs bare ${ratio(ceiling.rps, base.rps)}  ${cpu(ceiling, base)}`)
  for (const dialect of dialects) {
    const app = await startBenchServer('app.ts', dialect.url ? { BENCH_DATABASE_URL: dialect.url } : {})
    try {
      const url = `http://127.0.0.1:${app.info.port}/api/admin/api-keys`
      const host = app.info.host!
      const good = await requestsPerSecond(url, { host, 'x-api-key': app.info.key! }, seconds, undefined, app)
      const malformed = await requestsPerSecond(url, { host, 'x-api-key': 'csk_malformed' }, seconds, undefined, app)
      const unknown = await requestsPerSecond(url, { host, 'x-api-key': `csk_${'Z'.repeat(32)}` }, seconds, undefined, app)
      console.log(
        `${dialect.name.padEnd(8)} authenticated GET  ${good.rps.toFixed(0)} req/s  p50 ${good.p50} ms  vs bare ${ratio(good.rps, base.rps)}  ${cpu(good, base)}  (non-2xx ${good.non2xx})`,
      )
      console.log(
        `${dialect.name.padEnd(8)} malformed key 401  ${malformed.rps.toFixed(0)} req/s  vs bare ${ratio(malformed.rps, base.rps)}  ${cpu(malformed, base)}  (no database query)`,
      )
      console.log(
        `${dialect.name.padEnd(8)} unknown key 401    ${unknown.rps.toFixed(0)} req/s  vs bare ${ratio(unknown.rps, base.rps)}  ${cpu(unknown, base)}  (one indexed lookup)`,
      )
    } finally {
      await stopBenchServer(app)
    }
  }
  await verificationCost()
}

/** Server CPU per request, and against the bare server's as a throughput-equivalent ratio (bare µs / candidate µs). */
function cpu(run: { cpuMicrosPerRequest: number | undefined }, bare?: { cpuMicrosPerRequest: number | undefined }): string {
  const own = run.cpuMicrosPerRequest!
  return `server CPU ${own.toFixed(0)} µs/request${bare ? ` (bare/this ${ratio(bare.cpuMicrosPerRequest!, own)})` : ''}`
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
    `api-key verify  HMAC ${(hmacNs / 1000).toFixed(2)} µs   cached ${(cachedNs / 1000).toFixed(2)} µs   uncached (SQLite) ${(uncachedNs / 1000).toFixed(2)} µs   uncached/cached ${ratio(uncachedNs, cachedNs)}`,
  )
  await handle.close()
}
