// The candidate: the whole application over a real database, one owner key minted.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { buildApp } from '../../src/app.ts'
import { CLI_ACTOR } from '../../src/identity.ts'
import { endSessionsOfAccount } from '../../src/auth/sessions/end-sessions.ts'
import { systemClock } from '../../src/clock.ts'
import { loadConfig } from '../../src/config/load.ts'
import { connectDatabase } from '../../src/db/connect.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { grantAppRole, roleOfUrl } from '../../src/db/row-level-security.ts'
import { createLogger } from '../../src/http/logger.ts'
import { createApiKeysService } from '../../src/modules/api-keys/service.ts'
import { createMembersService } from '../../src/modules/orgs/members-service.ts'
import { createOrgsService } from '../../src/modules/orgs/service.ts'

// Without BENCH_DATABASE_URL: a SQLite file in a folder of its own, removed when the bench stops this server.
const scratch = process.env.BENCH_DATABASE_URL === undefined ? mkdtempSync(join(tmpdir(), 'sitegrid-bench-')) : undefined
const databaseUrl = scratch === undefined ? process.env.BENCH_DATABASE_URL! : `sqlite:${join(scratch, 'bench.db')}`
// Bearer bench (bench/bearer.ts): BENCH_OIDC_ISSUER / BENCH_OIDC_AUDIENCE name the loopback provider, BENCH_ORG_SLUG
// the organisation its tokens carry, BENCH_OIDC_ADMIN_OID the account made an admin of it.
const oidc = process.env.BENCH_OIDC_ISSUER
  ? { SITEGRID_OIDC_ISSUER: process.env.BENCH_OIDC_ISSUER, SITEGRID_OIDC_AUDIENCE: process.env.BENCH_OIDC_AUDIENCE ?? '' }
  : {}
const config = loadConfig(
  {
    DATABASE_URL: databaseUrl,
    SITEGRID_KEY_SECRET: randomBytes(32).toString('base64'),
    SITEGRID_MODE: 'cloud',
    SITEGRID_RATE_LIMIT_PER_MINUTE: '100000000',
    SITEGRID_DATA_DIR: tmpdir(),
    ...oidc,
  },
  { requireKeySecret: true },
)
// BENCH_DATABASE_APP_URL (PostgreSQL): the owner migrates and grants, and the application runs as this role, which is
// neither owner nor superuser, so row-level security applies as in a cell (a superuser passes every policy).
// SQLite: as the server connects (cli/server.ts), WAL checkpoints in a worker thread (db/checkpointer.ts), not inside
// whichever request's commit crosses 1 000 pages (issue 29, session 20: those were 75–88 % of a controller create's commit
// time, the event loop blocked on their fsyncs).
const owner = await connectDatabase(config.databaseUrl, { checkpoints: {} })
await migrateToLatest(owner.db)
const appUrl = process.env.BENCH_DATABASE_APP_URL
if (appUrl) await grantAppRole(owner.db, roleOfUrl(appUrl))
const org = await createOrgsService({ handle: owner, clock: systemClock }).provision(process.env.BENCH_ORG_SLUG ?? `bench-${randomBytes(3).toString('hex')}`)
const adminOid = process.env.BENCH_OIDC_ADMIN_OID
if (adminOid) {
  const members = createMembersService({ handle: owner, clock: systemClock, endSessions: endSessionsOfAccount })
  await members.recordSignIn(org.id, { oid: adminOid, email: 'bench@example.test', name: 'Bench' })
  await members.approve(org.id, { actor: CLI_ACTOR, isPlatformAdmin: true }, adminOid, 'admin')
}
const minted = await createApiKeysService({ handle: owner, clock: systemClock, keySecret: config.keySecret }).mint(org.id, CLI_ACTOR, {
  role: 'owner',
  name: 'bench',
  expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
})
if (appUrl) await owner.close()
const handle = appUrl ? await connectDatabase(appUrl) : owner
const app = await buildApp({ config, handle, clock: systemClock, log: createLogger(process.env.BENCH_LOG_LEVEL ?? 'warn') })
await app.listen({ host: '127.0.0.1', port: 0 })
console.log(
  JSON.stringify({ port: (app.server.address() as { port: number }).port, key: minted.plaintext, host: `${org.slug}.localhost`, orgId: org.id, databaseUrl }),
)
process.on('SIGTERM', () => {
  void app
    .close()
    .then(() => handle.close())
    .then(() => {
      if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true })
      process.exit(0)
    })
})
