// The fleet link's real-process tests (test/fleet/): a cloud cell of `sitegrid serve` processes on PostgreSQL and
// site servers on SQLite, each enrolled with `sitegrid link enrol` through its own loopback TCP proxy the test cuts.
// Shared here: the link's fast timings, callers with the tenant's Host header, `until`, the CLI runner and the start
// of a site server (registered in the cloud, enrolled, an owner key minted, serving).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { httpRequest, startServer, type Server } from '../cli/process.ts'
import { KEY_SECRET, sleep } from '../harness.ts'
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts'

export const FLEET_SLUG = 'fleet'
export const FLEET_HOST = `${FLEET_SLUG}.localhost`

/** Link timings short enough for tests: a change crosses in well under a second, a cut heals within half a second. */
export const FAST_LINK = {
  SITEGRID_LINK_PUSH_IDLE_MS: '50',
  SITEGRID_LINK_PULL_WAIT_MS: '2000',
  SITEGRID_LINK_HEARTBEAT_MS: '500',
  SITEGRID_LINK_BACKOFF_MAX_MS: '500',
  SITEGRID_LINK_PULL_POLL_MS: '50',
}

export type Call = (
  method: string,
  url: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; body: string; json: () => unknown }>

/** Calls `server()` (read on each call: the test may restart it) as the tenant's host with `auth` headers. */
export function caller(server: () => Server, auth: Record<string, string>): Call {
  return (method, url, body, headers = {}) =>
    httpRequest(`${server().url}${url}`, {
      method,
      headers: { host: FLEET_HOST, ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    })
}

/** Reads every 100 ms until `done`; fails after `seconds` with what was seen last. */
export async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, seconds = 60): Promise<T> {
  let last: T | undefined
  for (let i = 0; i < seconds * 10; i++) {
    last = await read()
    if (done(last)) return last
    await sleep(100)
  }
  assert.fail(`${what}: not reached in ${seconds} s; last seen ${JSON.stringify(last)?.slice(0, 2000)}`)
}

/** `node bundle.mjs …` (the pre-built sitegrid), as an operator runs the CLI. */
export function cli(
  bundle: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bundle, ...args], { cwd, env: { PATH: process.env.PATH, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += String(d)))
    child.stderr.on('data', (d) => (stderr += String(d)))
    child.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

export interface SiteServer {
  cwd: string
  env: Record<string, string> & { DATABASE_URL: string }
  proxy: TcpProxy
  server: Server
  call: Call
  /** The owner API key `call` sends. */
  apiKey: string
  serverId: string
}

/**
 * A site server on SQLite for `sites`: registered in the cloud by `ownerCall`, enrolled with `sitegrid link enrol`
 * through a TCP proxy in front of `cloud`, an owner API key minted (`keyLifetime`, 1d by default), then serving.
 */
export async function startSite(
  t: TestContext,
  bundle: string,
  cloud: Server,
  ownerCall: Call,
  name: string,
  sites: string[],
  o: { keyLifetime?: string; env?: Record<string, string> } = {},
): Promise<SiteServer> {
  const cwd = mkdtempSync(join(tmpdir(), `sitegrid-fleet-${name}-`))
  t.after(() => rmSync(cwd, { recursive: true, force: true }))
  const env = {
    DATABASE_URL: `sqlite:${join(cwd, 'site.db')}`,
    SITEGRID_MODE: 'site',
    SITEGRID_KEY_SECRET: KEY_SECRET,
    SITEGRID_DATA_DIR: join(cwd, 'data'),
    SITEGRID_LOG_LEVEL: 'warn',
    SITEGRID_RATE_LIMIT_PER_MINUTE: '100000000',
    SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE: '100000000',
    ...FAST_LINK,
    ...o.env,
  }
  const proxy = await startTcpProxy(cloud.port)
  t.after(() => proxy.close())
  const registered = await ownerCall('POST', '/api/admin/site-servers', { name, sites })
  assert.equal(registered.status, 201, registered.body)
  const { id, enrolmentCode } = registered.json() as { id: string; enrolmentCode: string }
  const enrolled = await cli(bundle, ['link', 'enrol', '--cloud', `http://${FLEET_HOST}:${proxy.port}`, '--code', enrolmentCode], cwd, env)
  assert.equal(enrolled.code, 0, enrolled.stderr)
  const minted = await cli(bundle, ['key', 'mint', '--org', FLEET_SLUG, '--role', 'owner', '--name', 'test', '--expires-in', o.keyLifetime ?? '1d'], cwd, env)
  assert.equal(minted.code, 0, minted.stderr)
  const site: SiteServer = {
    cwd,
    env,
    proxy,
    server: await startServer({ cwd, env, bundle }),
    call: (...args) => caller(() => site.server, { 'x-api-key': site.apiKey })(...args),
    apiKey: minted.stdout.trim(),
    serverId: id,
  }
  t.after(() => site.server.stop('SIGKILL'))
  return site
}

/** The `items` of a 200 list answer. */
export async function items(call: Call, url: string): Promise<unknown[]> {
  const res = await call('GET', url)
  assert.equal(res.status, 200, `${url}: ${res.body}`)
  return (res.json() as { items: unknown[] }).items
}

/** A process's resident set now (VmRSS) and its peak since it started (VmHWM), in bytes, from /proc/<pid>/status. */
export function memoryOf(pid: number): { rss: number; peak: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string) => Number(/\s(\d+) kB/.exec(status.split('\n').find((l) => l.startsWith(`${field}:`)) ?? '')?.[1] ?? Number.NaN) * 1024
  return { rss: kib('VmRSS'), peak: kib('VmHWM'), anon: kib('RssAnon') }
}
