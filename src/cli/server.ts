// `sitegrid serve` and `sitegrid migrate`, loaded when one of them runs (cli/serve.ts holds their descriptions).
import type { AddressInfo } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { buildApp } from '../app.ts'
import { systemClock } from '../clock.ts'
import { loadConfig } from '../config/load.ts'
import { migrateToLatest } from '../db/migrate.ts'
import { grantAppRole, roleOfUrl } from '../db/row-level-security.ts'
import type { Config } from '../config/schema.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import { createLogger } from '../http/logger.ts'
import { startMetricsListener, type MetricsListener } from '../http/metrics-endpoint.ts'
import { collectProcessMetrics, createMetrics, type Metrics } from '../http/metrics.ts'
import type { CommandIo } from './command.ts'
import { describeDatabase, holdServeLock, openDatabase } from './database.ts'
import { prettyDestination } from './pretty-log.ts'
import { siteOrgAmbiguityOf } from './site-org.ts'

/** The URLs to open, as the line `sitegrid serve` prints once it listens. */
export function readyLine(config: Config, port: number): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host
  if (config.mode === 'site') {
    const base = `http://${host}:${port}`
    return `sitegrid (site server) ready: console ${base}/  API ${base}/api/  (OpenAPI ${base}/openapi.json)`
  }
  const base = `http://{org}.${config.baseDomain}:${port}`
  return `sitegrid (cloud cell) ready: console ${base}/  API ${base}/api/  (OpenAPI http://${host}:${port}/openapi.json)`
}

/** `sitegrid serve`: resolves to the exit code once the server has stopped (SIGTERM, SIGINT). */
export async function serve(values: Record<string, string | boolean | undefined>, io: CommandIo): Promise<number> {
  const config = loadConfig(io.env, { requireKeySecret: true, requireDatabaseFolder: true })
  // Human lines on a terminal, JSON lines otherwise (a file, a pipe, the journal): cli/pretty-log.ts.
  const log = createLogger(config.logLevel, process.stdout.isTTY ? prettyDestination(process.stdout) : undefined)
  // SQLite: one serving process per file; a second start stops here, naming the first (db/server-lock.ts).
  if (config.databaseUrl.startsWith('sqlite:')) holdServeLock(config.databaseUrl)
  // PostgreSQL with SITEGRID_DATABASE_APP_URL: the owner (DATABASE_URL) migrates and grants, then closes; the
  // service runs as the app role, which row-level security applies to (README § PostgreSQL).
  if (config.databaseAppUrl && config.migrateOnStart && !values['no-migrate']) {
    const owner = await openDatabase(config.databaseUrl, 'DATABASE_URL', { poolSize: 1 })
    try {
      await migrateAndGrant(owner, config)
    } finally {
      await owner.close()
    }
  }
  // SQLite: the serving process checkpoints the WAL from a worker thread, off the request path (db/checkpointer.ts),
  // whose failures go to the log.
  const handle = await openDatabase(config.databaseAppUrl ?? config.databaseUrl, config.databaseAppUrl ? 'SITEGRID_DATABASE_APP_URL' : 'DATABASE_URL', {
    ...config.database,
    checkpoints: { log },
  })
  // Nothing may hold the process open once the start has failed: its jobs, the database, the SQLite serve lock.
  const { app, metricsListener } = await listening(
    { config, handle, log, migrate: !config.databaseAppUrl && config.migrateOnStart && !values['no-migrate'] },
    io,
  ).catch(async (err: unknown) => {
    await handle.close()
    throw err
  })
  log.info(
    { mode: config.mode, database: describeDatabase(config.databaseUrl), keySecretSource: config.keySecretSource, baseDomain: config.baseDomain },
    'sitegrid serving',
  )
  const ambiguity = await siteOrgAmbiguityOf(config, handle)
  if (ambiguity) log.warn({ setting: 'SITEGRID_SITE_ORG' }, ambiguity)
  // One line for the person who started it (stderr: stdout carries the log, JSON when not on a terminal).
  io.err(readyLine(config, (app.server.address() as AddressInfo).port))

  return new Promise<number>((resolve) => {
    let stopping = false
    const stop = (signal: string) => {
      // A second signal while draining (a repeated Ctrl-C, `kill` sent twice) must not kill the process with the
      // requests still being answered: the listeners stay, and the grace period alone bounds the exit.
      if (stopping) {
        log.warn({ signal }, 'already draining; the grace period bounds the exit')
        return
      }
      stopping = true
      log.info({ signal }, 'draining')
      // The grace period bounds the exit: a request still open then (an upload, a stuck query) does not hold it.
      const force = setTimeout(() => {
        log.error('grace period over; exiting with requests still open')
        process.exit(1)
      }, config.shutdownGraceMs)
      force.unref()
      // At once: app.close() drains (src/http/drain.ts: the listener closes once the queued connections are taken)
      // while its periodic jobs (serving-jobs.ts) wind down.
      Promise.all([app.close(), metricsListener?.close()])
        .then(() => handle.close())
        .then(() => {
          clearTimeout(force)
          log.info('stopped')
          return 0
        })
        .catch((err: unknown) => {
          log.error({ err }, 'shutdown failed')
          return 1
        })
        .then((code) => {
          process.off('SIGTERM', onTerm).off('SIGINT', onInt)
          resolve(code)
        })
    }
    const onTerm = () => stop('SIGTERM')
    const onInt = () => stop('SIGINT')
    process.on('SIGTERM', onTerm).on('SIGINT', onInt)
  })
}

/** Migrates (unless told not to), builds the app and listens; the app is closed again if the start fails after it was built. */
async function listening(start: { config: Config; handle: DatabaseHandle; log: FastifyBaseLogger; migrate: boolean }, io: CommandIo) {
  const { config, handle, log } = start
  if (start.migrate) await migrateToLatest(handle.db)
  const metrics = createMetrics({ poolStats: () => handle.poolStats() })
  collectProcessMetrics(metrics)
  // POST /api/admin/config/reload rereads the same sources the start did (the file and this environment).
  const app = await buildApp({
    config,
    handle,
    clock: systemClock,
    log,
    metrics,
    runJobs: true,
    reloadConfig: () => loadConfig(io.env, { requireKeySecret: true }),
  })
  try {
    await app.listen({ host: config.host, port: config.port }).catch((err: unknown) => {
      throw listenFailed(err, config)
    })
    return { app, metricsListener: await listenForMetrics(metrics, config, log) }
  } catch (err) {
    await app.close()
    throw err
  }
}

/** The listen address refused (taken, not on this host, a privileged port): the line names HOST and PORT and why. */
function listenFailed(err: unknown, config: Config): Error {
  const code = (err as NodeJS.ErrnoException).code
  const address = `${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`
  const why: Record<string, string> = {
    EADDRINUSE: 'is already in use (another server, or another sitegrid serve on another data folder): stop it or choose another PORT',
    EADDRNOTAVAIL: 'is not an address of this machine: choose another HOST',
    EACCES: 'needs privileges this process lacks (a port below 1024): choose a PORT of 1024 or more',
    ENOTFOUND: 'names a host that does not resolve: choose another HOST',
  }
  return code && why[code] ? new Error(`HOST, PORT: cannot listen on ${address}: it ${why[code]}`, { cause: err }) : (err as Error)
}

/**
 * The metrics' own listener (SITEGRID_METRICS_ADDRESS; docs/metrics.md). Its address taken (another sitegrid process
 * on this host, each wants its own) only costs this process its metrics, with a warning; any other failure stops the start.
 */
async function listenForMetrics(metrics: Metrics, config: Config, log: FastifyBaseLogger): Promise<MetricsListener | undefined> {
  const listen = config.metrics.listen
  if (!listen) return undefined
  try {
    const listener = await startMetricsListener(metrics, { ...listen, sealedToken: config.metrics.sealedToken, log })
    const { address, port } = listener.address
    log.info({ metrics: `http://${address.includes(':') ? `[${address}]` : address}:${port}/metrics` }, 'metrics listening')
    return listener
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err
    log.warn({ setting: 'SITEGRID_METRICS_ADDRESS', address: `${listen.host}:${listen.port}` }, 'metrics listener not started: its address is in use')
    return undefined
  }
}

/** Migrates, then (PostgreSQL with SITEGRID_DATABASE_APP_URL) grants the app role its rights on every table. */
async function migrateAndGrant(handle: DatabaseHandle, config: Config) {
  const results = await migrateToLatest(handle.db)
  if (config.databaseAppUrl && handle.dialect === 'postgres') await grantAppRole(handle.db, roleOfUrl(config.databaseAppUrl))
  return results
}

/** `sitegrid migrate`. */
export async function migrate(io: CommandIo): Promise<void> {
  const config = loadConfig(io.env, { requireKeySecret: false, requireDatabaseFolder: true })
  const handle = await openDatabase(config.databaseUrl, 'DATABASE_URL', { poolSize: 1 })
  try {
    const results = await migrateAndGrant(handle, config)
    for (const r of results) io.out(`${r.status.toLowerCase()}\t${r.migrationName}`)
    if (results.length === 0) io.err('migrate: schema already up to date')
  } finally {
    await handle.close()
  }
}
