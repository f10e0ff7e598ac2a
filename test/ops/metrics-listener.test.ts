import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { httpRequest, runCli, startServer } from '../cli/process.ts'
import { parseExposition, valueOf } from './exposition.ts'

/** The TCP sockets process `pid` listens on, from /proc (address in /proc's hex form: 0100007F is 127.0.0.1). */
function listeningSockets(pid: number): Array<{ address: string; port: number }> {
  const inodes = new Set(
    readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
      try {
        return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? []
      } catch {
        return [] // closed meanwhile
      }
    }),
  )
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((table) =>
    readFileSync(table, 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((f) => f[3] === '0A' && inodes.has(f[9]!)) // 0A: LISTEN
      .map((f) => ({ address: f[1]!.split(':')[0]!, port: Number.parseInt(f[1]!.split(':')[1]!, 16) })),
  )
}

const LOOPBACK_V4 = '0100007F'

describe('the metrics listener of `sitegrid serve`', () => {
  it('listens on loopback (a bare SITEGRID_METRICS_ADDRESS port binds 127.0.0.1), answers the exposition with process metrics, and closes with the server; `off` opens none', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-metrics-'))
    t.after(() => rmSync(cwd, { recursive: true, force: true }))
    assert.equal(runCli(['init'], { cwd }).code, 0)

    const server = await startServer({ cwd, env: { SITEGRID_METRICS_ADDRESS: '0', SITEGRID_LOG_LEVEL: 'info' } })
    t.after(() => server.stop())
    const sockets = listeningSockets(server.child.pid!)
    assert.equal(sockets.length, 2, JSON.stringify(sockets))
    const metricsSocket = sockets.find((s) => s.port !== server.port)!
    assert.equal(metricsSocket.address, LOOPBACK_V4, 'the metrics listener binds 127.0.0.1')
    assert.match(server.output(), new RegExp(`"metrics":"http://127\\.0\\.0\\.1:${metricsSocket.port}/metrics"`), 'its address is logged')

    assert.equal((await httpRequest(`${server.url}/api/sites`, { headers: { host: 'nobody.localhost' } })).status, 401)
    const url = `http://127.0.0.1:${metricsSocket.port}`
    const scraped = await httpRequest(`${url}/metrics`)
    assert.equal(scraped.status, 200)
    const samples = parseExposition(scraped.body)
    assert.equal(valueOf(samples, 'sitegrid_http_requests_total', { route: '/api/sites', method: 'GET', status: '401' }), 1)
    for (const name of [
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_p99_seconds',
      'sitegrid_db_pool_max_connections',
    ]) {
      assert.ok(valueOf(samples, name) !== undefined, `${name} is exposed`)
    }
    // Every series the Grafana dashboard queries is one the server exposes, counters that counted nothing yet at 0.
    const dashboard = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'grafana', 'sitegrid-dashboard.json'), 'utf8')
    const queried = new Set(dashboard.match(/\b(?:sitegrid|nodejs|process)_[a-z0-9_]+/g))
    assert.ok(queried.size >= 20, `${queried.size} series queried`)
    for (const name of queried) assert.ok(valueOf(samples, name) !== undefined, `the dashboard's ${name} is exposed`)
    assert.equal((await httpRequest(`${url}/other`)).status, 404)
    assert.equal((await httpRequest(`${url}/metrics`, { method: 'POST' })).status, 405)
    // Without SITEGRID_METRICS_TOKEN the main listener has no /metrics: the answer of any unknown path.
    const main = await httpRequest(`${server.url}/metrics`, { headers: { host: 'nobody.localhost' } })
    assert.equal(main.status, 404)
    assert.equal((main.json() as { code: string }).code, 'NotFound')

    assert.equal(await server.stop(), 0)
    await assert.rejects(httpRequest(`${url}/metrics`), /ECONNREFUSED/, 'closed with the server')

    const off = await startServer({ cwd, env: { SITEGRID_METRICS_ADDRESS: 'off' } })
    t.after(() => off.stop())
    assert.deepEqual(
      listeningSockets(off.child.pid!).map((s) => s.port),
      [off.port],
    )
    assert.equal(await off.stop(), 0)
  })

  it('an address already taken (another process on the host) starts the server without its metrics listener, with a warning; the token still serves /metrics on the main listener', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-metrics-'))
    t.after(() => rmSync(cwd, { recursive: true, force: true }))
    assert.equal(runCli(['init'], { cwd }).code, 0)
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    t.after(() => new Promise<void>((resolve) => taken.close(() => resolve())))
    const takenPort = (taken.address() as AddressInfo).port
    const token = randomBytes(32).toString('hex')

    const server = await startServer({ cwd, env: { SITEGRID_METRICS_ADDRESS: String(takenPort), SITEGRID_METRICS_TOKEN: token } })
    t.after(() => server.stop())
    assert.deepEqual(
      listeningSockets(server.child.pid!).map((s) => s.port),
      [server.port],
    )
    const warning = server
      .output()
      .split('\n')
      .find((line) => line.includes('metrics listener not started'))
    assert.ok(warning, server.output())
    assert.equal(JSON.parse(warning).setting, 'SITEGRID_METRICS_ADDRESS')
    assert.ok(!server.output().includes(token), 'the token is never logged')
    const scraped = await httpRequest(`${server.url}/metrics`, { headers: { host: 'nobody.localhost', authorization: `Bearer ${token}` } })
    assert.equal(scraped.status, 200)
    assert.ok(valueOf(parseExposition(scraped.body), 'process_resident_memory_bytes') !== undefined)
    assert.equal((await httpRequest(`${server.url}/metrics`, { headers: { host: 'nobody.localhost' } })).status, 404)
    assert.equal(await server.stop(), 0)
  })
})
