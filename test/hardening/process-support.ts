// Set-up of the hardening suites that run real server processes (crash, shutdown, dependency faults): a database
// of either dialect with one organisation and an owner key, minted through the services as `sitegrid` would. On
// PostgreSQL the server runs as the non-owner application role (test/postgres.ts TEST_APP_ROLE) under row-level
// security, as the in-process tests do (test/harness.ts): DATABASE_URL (the owner) migrates, SITEGRID_DATABASE_APP_URL
// serves. SITEGRID_TEST_RLS=off serves as the owner instead.
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { sql } from 'kysely'
import { CLI_ACTOR } from '../../src/identity.ts'
import { systemClock } from '../../src/clock.ts'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { grantAppRole } from '../../src/db/row-level-security.ts'
import type { OrgId } from '../../src/ids.ts'
import { createApiKeysService } from '../../src/modules/api-keys/service.ts'
import { createOrgsService } from '../../src/modules/orgs/service.ts'
import { KEY_SECRET, rowLevelSecurityInTests, type TestDialect } from '../harness.ts'
import { appRoleUrl, createTestDatabase, ensureAppRole, TEST_APP_ROLE } from '../postgres.ts'

export interface ProcessWorld {
  cwd: string
  databaseUrl: string
  handle: DatabaseHandle
  orgId: OrgId
  slug: string
  ownerKey: string
  /** The environment of `sitegrid serve` for this database (with SITEGRID_DATABASE_APP_URL on PostgreSQL). */
  env: Record<string, string>
}

/**
 * PostgreSQL (unless SITEGRID_TEST_RLS=off): makes sure the application role exists and holds its table rights on
 * this migrated database, and answers the environment that makes `sitegrid serve` run as it; SQLite: nothing.
 * `handle` is the owner's connection to `databaseUrl`.
 */
export async function appRoleEnv(handle: DatabaseHandle, databaseUrl: string): Promise<Record<string, string>> {
  if (handle.dialect !== 'postgres' || !rowLevelSecurityInTests()) return {}
  await ensureAppRole(process.env.TEST_DATABASE_URL ?? databaseUrl)
  await grantAppRole(handle.db, TEST_APP_ROLE)
  return { SITEGRID_DATABASE_APP_URL: appRoleUrl(databaseUrl) }
}

/** A fresh database (own SQLite file, or own PostgreSQL database), migrated, with organisation `slug` and an owner key. */
export async function processWorld(t: TestContext, dialect: TestDialect, slug: string, env: Record<string, string> = {}): Promise<ProcessWorld> {
  const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-hardening-'))
  t.after(() => rmSync(cwd, { recursive: true, force: true }))
  const databaseUrl = dialect === 'sqlite' ? `sqlite:${join(cwd, 'site.db')}` : await createTestDatabase(process.env.TEST_DATABASE_URL!)
  const handle = await connectDatabase(databaseUrl, { poolSize: 2 })
  t.after(() => handle.close())
  await migrateToLatest(handle.db)
  const appRole = await appRoleEnv(handle, databaseUrl)
  const org = await createOrgsService({ handle, clock: systemClock }).provision(slug)
  const keys = createApiKeysService({ handle, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') })
  const owner = await keys.mint(org.id, CLI_ACTOR, { role: 'owner', name: 'owner', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })
  return {
    cwd,
    databaseUrl,
    handle,
    orgId: org.id,
    slug,
    ownerKey: owner.plaintext,
    env: {
      DATABASE_URL: databaseUrl,
      ...appRole,
      SITEGRID_KEY_SECRET: KEY_SECRET,
      SITEGRID_LOG_LEVEL: 'warn',
      SITEGRID_DATA_DIR: join(cwd, 'data'),
      SITEGRID_RATE_LIMIT_PER_MINUTE: '100000000',
      SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE: '100000000',
      ...env,
    },
  }
}

/**
 * PostgreSQL: the roles of the connections to this database other than the test's own (the owner), i.e. those of the
 * server processes; `[TEST_APP_ROLE]` once a server served a request as the application role. SQLite: [].
 */
export async function serverRoles(w: ProcessWorld): Promise<string[]> {
  if (w.handle.dialect !== 'postgres') return []
  const { rows } = await sql<{ usename: string }>`select distinct usename from pg_stat_activity
    where datname = current_database() and usename <> current_user order by usename`.execute(w.handle.db)
  return rows.map((r) => r.usename)
}

/** A small seeded generator (mulberry32): the printed seed replays the same random moments. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export function seedFromEnv(name: string): number {
  const given = process.env[name]
  return given ? Number(given) : Math.floor(Math.random() * 2 ** 31)
}

export function countFromEnv(name: string, fallback: number): number {
  const given = Number(process.env[name])
  return Number.isInteger(given) && given > 0 ? given : fallback
}

/** An HTTP call with a Host header and binary bodies both ways (test/cli/process.ts's httpRequest is text only). */
export function rawRequest(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {},
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (d: Buffer) => chunks.push(d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(init.body)
  })
}
