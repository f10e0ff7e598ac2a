import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import type { TestContext } from 'node:test'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../src/app.ts'
import { CLI_ACTOR, type Actor, type Role, type Org } from '../src/identity.ts'
import type { Clock } from '../src/clock.ts'
import { loadConfig } from '../src/config/load.ts'
import type { Config } from '../src/config/schema.ts'
import { connectDatabase, type DatabaseHandle } from '../src/db/connect.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { grantAppRole } from '../src/db/row-level-security.ts'
import { createLogger } from '../src/http/logger.ts'
import { createApiKeysService } from '../src/modules/api-keys/service.ts'
import { createOrgsService } from '../src/modules/orgs/service.ts'
import { appRoleUrl, createTestDatabase, ensureAppRole, TEST_APP_ROLE } from './postgres.ts'

export type TestDialect = 'sqlite' | 'postgres'

/** Both databases unless SITEGRID_TEST_DIALECTS narrows it; PostgreSQL comes from test/run.ts or TEST_DATABASE_URL. */
export function testDialects(): TestDialect[] {
  const wanted = (process.env.SITEGRID_TEST_DIALECTS ?? 'sqlite,postgres').split(',')
  return (['sqlite', 'postgres'] as const).filter((d) => wanted.includes(d))
}

let processDatabase: Promise<string> | undefined

/** One migrated PostgreSQL database per test process; tests share it and isolate by organisation. */
export function postgresUrl(): Promise<string> {
  const admin = process.env.TEST_DATABASE_URL
  if (!admin) throw new Error('PostgreSQL tests need TEST_DATABASE_URL: run them through `npm test` (test/run.ts starts a server)')
  processDatabase ??= (async () => {
    const url = await createTestDatabase(admin)
    const handle = await connectDatabase(url, { poolSize: 1 })
    await migrateToLatest(handle.db)
    if (rowLevelSecurityInTests()) {
      await ensureAppRole(admin)
      await grantAppRole(handle.db, TEST_APP_ROLE)
    }
    await handle.close()
    return url
  })()
  return processDatabase
}

/**
 * PostgreSQL tests run the application as a role that row-level security applies to (test/postgres.ts
 * TEST_APP_ROLE), so every PostgreSQL test exercises the policies; the test's own `h.handle` stays the owner, so its
 * checks see every row. SITEGRID_TEST_RLS=off runs the application as the owner instead (to tell an RLS failure from
 * another one); test/hardening/row-level-security.test.ts checks the policies either way.
 */
export function rowLevelSecurityInTests(): boolean {
  return process.env.SITEGRID_TEST_RLS !== 'off'
}

/** The test's handle: the owner's queries, and the invalidation signals of both it and the application's handle. */
function ownerWithAppSignals(owner: DatabaseHandle, app: DatabaseHandle): DatabaseHandle {
  return {
    db: owner.db,
    dialect: owner.dialect,
    generation: () => owner.generation() + app.generation(),
    announceInvalidation: (trx) => owner.announceInvalidation(trx),
    invalidateLocally: () => {
      owner.invalidateLocally()
      app.invalidateLocally()
    },
    ping: () => owner.ping(),
    spareConnections: () => owner.spareConnections(),
    poolStats: () => owner.poolStats(),
    close: async () => {
      await app.close()
      await owner.close()
    },
  }
}

export async function databaseUrlFor(t: TestContext, dialect: TestDialect): Promise<string> {
  if (dialect === 'postgres') return postgresUrl()
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-test-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return `sqlite:${join(dir, 'sitegrid.db')}`
}

export interface TestClock extends Clock {
  set(ms: number): void
  advance(ms: number): void
}

export function testClock(start = Date.now()): TestClock {
  let now = start
  return {
    now: () => now,
    set: (ms) => {
      now = ms
    },
    advance: (ms) => {
      now += ms
    },
  }
}

export interface Credential {
  org: Org
  apiKey?: string
  bearer?: string
}

export interface Harness {
  dialect: TestDialect
  config: Config
  handle: DatabaseHandle
  clock: TestClock
  app: Awaited<ReturnType<typeof buildApp>>
  /** The application's own handle (its pool; on PostgreSQL the row-level-security role's), for tests of the pool. */
  appHandle: DatabaseHandle
  /** Every log line the app wrote, as parsed JSON. */
  logs(): Array<Record<string, unknown>>
  rawLogs(): string
  createOrg(slug?: string): Promise<Org>
  mintKey(org: Org, role?: Role, options?: { actor?: Actor; lifetimeMs?: number; name?: string }): Promise<{ plaintext: string; keyId: string }>
  /** An organisation with an owner key, the common start of a test. */
  orgWithKey(role?: Role): Promise<{ org: Org; key: string; keyId: string }>
  inject(credential: Credential | undefined, options: InjectOptions & { host?: string }): Promise<LightMyRequestResponse>
}

export const KEY_SECRET = randomBytes(32).toString('base64')

/** A whole application over a real database, torn down after the test. */
export async function harness(
  t: TestContext,
  dialect: TestDialect,
  env: Record<string, string> = {},
  options: { appPoolSize?: number; alarmWrites?: { writeRetryDeadlineMs: number } } = {},
): Promise<Harness> {
  const databaseUrl = await databaseUrlFor(t, dialect)
  const dataDir = mkdtempSync(join(tmpdir(), 'sitegrid-data-'))
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const appRole = dialect === 'postgres' && rowLevelSecurityInTests()
  const config = loadConfig(
    {
      DATABASE_URL: databaseUrl,
      ...(appRole ? { SITEGRID_DATABASE_APP_URL: appRoleUrl(databaseUrl) } : {}),
      SITEGRID_KEY_SECRET: KEY_SECRET,
      SITEGRID_LAST_USED_FLUSH_MS: '50',
      SITEGRID_LOG_LEVEL: 'info',
      SITEGRID_DATA_DIR: dataDir,
      SITEGRID_BASE_DOMAIN: 'localhost',
      ...env,
    },
    { requireKeySecret: true },
  )
  const appPoolSize = options.appPoolSize ?? 4
  const owner = await connectDatabase(config.databaseUrl, { poolSize: appRole ? 2 : appPoolSize })
  if (dialect === 'sqlite') await migrateToLatest(owner.db)
  const appHandle = config.databaseAppUrl ? await connectDatabase(config.databaseAppUrl, { poolSize: appPoolSize }) : owner
  const handle = appHandle === owner ? owner : ownerWithAppSignals(owner, appHandle)
  const clock = testClock()
  let buffer = ''
  const sink = new Writable({
    write(chunk, _enc, cb) {
      buffer += String(chunk)
      cb()
    },
  })
  const app = await buildApp({
    config,
    handle: appHandle,
    clock,
    log: createLogger(config.logLevel, sink),
    ...(options.alarmWrites ? { alarmWrites: options.alarmWrites } : {}),
  })
  t.after(async () => {
    await app.close()
    await handle.close()
  })
  const orgs = createOrgsService({ handle, clock })
  const apiKeys = createApiKeysService({ handle, clock, keySecret: config.keySecret })

  const h: Harness = {
    dialect,
    config,
    handle,
    clock,
    app,
    appHandle,
    logs: () =>
      buffer
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    rawLogs: () => buffer,
    createOrg: (slug) => orgs.provision(slug ?? `t-${randomBytes(5).toString('hex')}`),
    async mintKey(org, role = 'owner', options = {}) {
      const minted = await apiKeys.mint(org.id, options.actor ?? CLI_ACTOR, {
        role,
        name: options.name ?? `${role} key`,
        expiresAt: new Date(clock.now() + (options.lifetimeMs ?? 30 * 86_400_000)).toISOString(),
      })
      return { plaintext: minted.plaintext, keyId: minted.keyId }
    },
    async orgWithKey(role = 'owner') {
      const org = await h.createOrg()
      const { plaintext, keyId } = await h.mintKey(org, role)
      return { org, key: plaintext, keyId }
    },
    inject(credential, options) {
      const headers: Record<string, string> = { ...(options.headers as Record<string, string> | undefined) }
      headers.host = options.host ?? (credential ? `${credential.org.slug}.localhost` : 'unknown.localhost')
      if (credential?.apiKey) headers['x-api-key'] = credential.apiKey
      if (credential?.bearer) headers.authorization = `Bearer ${credential.bearer}`
      return app.inject({ ...options, headers })
    },
  }
  return h
}

/** Headers that legitimately differ between two otherwise identical answers. */
export function comparableHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const { date: _date, ...rest } = headers
  return rest
}

/** A problem body without its per-request `instance`. */
export function comparableBody(body: string): Record<string, unknown> {
  const { instance: _instance, ...rest } = JSON.parse(body) as Record<string, unknown>
  return rest
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * PostgreSQL hears invalidations (NOTIFY) asynchronously, its own included: waits until `handle`'s generation has
 * held still for 250 ms, so that a count of queries or lookups that follows is not cut short by a late one.
 */
export async function invalidationsSettled(handle: { generation(): number }): Promise<void> {
  let last = handle.generation()
  let stillSince = Date.now()
  while (Date.now() - stillSince < 250) {
    await sleep(25)
    const now = handle.generation()
    if (now !== last) {
      last = now
      stillSince = Date.now()
    }
  }
}
