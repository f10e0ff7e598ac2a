// The forward proxy the fleet link's tests stand for a plant's outbound proxy (issue 26): absolute-form requests and
// CONNECT tunnels reach the target (`*.localhost` resolved to loopback by the proxy) and are counted; an origin-form
// request, a denied target and a missing or wrong proxy password are turned away and counted as refused.
// No database is involved: these run once, not per dialect.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, request, type Server } from 'node:http'
import { connect } from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import { startHttpProxy } from './http-proxy.ts'

/** An HTTP server answering with the method, path, Host header and request body it got. */
async function target(t: TestContext): Promise<number> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ method: req.method, path: req.url, host: req.headers.host, body: Buffer.concat(chunks).toString() }))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => new Promise((resolve) => server.close(resolve)))
  return (server.address() as { port: number }).port
}

function viaProxy(proxyPort: number, o: { path: string; method?: string; headers?: Record<string, string>; body?: string }) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: proxyPort, method: o.method ?? 'GET', path: o.path, headers: o.headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
    })
    req.on('error', reject)
    req.end(o.body)
  })
}

/** Opens a CONNECT tunnel and sends one HTTP/1.0 request through it; the raw answer (status line of the tunnel first). */
function tunnel(proxyPort: number, authority: string, headers = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(proxyPort, '127.0.0.1')
    let text = ''
    let sent = false
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString()
      if (!sent && text.startsWith('HTTP/1.1 200')) {
        sent = true
        socket.write(`GET /through HTTP/1.0\r\nHost: ${authority}\r\n\r\n`)
      }
    })
    socket.on('end', () => resolve(text))
    socket.on('close', () => resolve(text))
    socket.on('error', reject)
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${headers}\r\n`)
  })
}

describe('http forward proxy (test support for the fleet link)', () => {
  it('forwards an absolute-form request with its body to the target named in it, `*.localhost` on loopback, and counts it', async (t) => {
    const port = await target(t)
    const proxy = await startHttpProxy()
    t.after(() => proxy.close())
    const answer = await viaProxy(proxy.port, { method: 'POST', path: `http://acme.localhost:${port}/api/link/push?x=1`, body: 'payload' })
    assert.equal(answer.status, 200)
    assert.deepEqual(JSON.parse(answer.body), { method: 'POST', path: '/api/link/push?x=1', host: `acme.localhost:${port}`, body: 'payload' })
    const stats = proxy.stats()
    assert.deepEqual([stats.requests, stats.tunnels, stats.refused], [1, 0, 0])
    assert.deepEqual(stats.targets, [`acme.localhost:${port}`])
    assert.equal(stats.bytesUp, 'payload'.length)
    assert.equal(stats.bytesDown, Buffer.byteLength(answer.body))
  })

  it('opens a CONNECT tunnel to the target and counts the bytes both ways', async (t) => {
    const port = await target(t)
    const proxy = await startHttpProxy()
    t.after(() => proxy.close())
    const raw = await tunnel(proxy.port, `acme.localhost:${port}`)
    assert.match(raw, /^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200 OK/)
    assert.match(raw, /"path":"\/through"/)
    const stats = proxy.stats()
    assert.deepEqual([stats.requests, stats.tunnels, stats.refused], [0, 1, 0])
    assert.ok(stats.bytesUp > 0 && stats.bytesDown > 0)
  })

  it('`route` sends a target elsewhere: a name that resolves nowhere reaches the port it is routed to', async (t) => {
    const port = await target(t)
    const proxy = await startHttpProxy({ route: () => ({ host: '127.0.0.1', port }) })
    t.after(() => proxy.close())
    const answer = await viaProxy(proxy.port, { path: 'http://cloud.invalid:443/api/link/pull' })
    assert.equal(answer.status, 200)
    assert.equal(JSON.parse(answer.body).host, 'cloud.invalid:443')
  })

  it('refuses an origin-form request (400), a denied target (403) and an unreachable one (502), counting each', async (t) => {
    const port = await target(t)
    const proxy = await startHttpProxy({ deny: (to) => to.startsWith('blocked.') })
    t.after(() => proxy.close())
    assert.equal((await viaProxy(proxy.port, { path: '/api/link/push' })).status, 400)
    assert.equal((await viaProxy(proxy.port, { path: `http://blocked.localhost:${port}/` })).status, 403)
    assert.match(await tunnel(proxy.port, `blocked.localhost:${port}`), /^HTTP\/1\.1 403/)
    assert.match(await tunnel(proxy.port, '127.0.0.1:1'), /^HTTP\/1\.1 502/)
    const stats = proxy.stats()
    assert.deepEqual([stats.requests, stats.tunnels], [0, 0])
    assert.equal(stats.refused, 4)
  })

  it('with `auth`, a missing or wrong Proxy-Authorization gets 407 and the right one passes, for requests and tunnels', async (t) => {
    const port = await target(t)
    const proxy = await startHttpProxy({ auth: { user: 'plant', password: 'pw' } })
    t.after(() => proxy.close())
    const good = `Basic ${Buffer.from('plant:pw').toString('base64')}`
    const bad = `Basic ${Buffer.from('plant:nope').toString('base64')}`
    assert.equal((await viaProxy(proxy.port, { path: `http://127.0.0.1:${port}/` })).status, 407)
    assert.equal((await viaProxy(proxy.port, { path: `http://127.0.0.1:${port}/`, headers: { 'proxy-authorization': bad } })).status, 407)
    assert.equal((await viaProxy(proxy.port, { path: `http://127.0.0.1:${port}/`, headers: { 'proxy-authorization': good } })).status, 200)
    assert.match(await tunnel(proxy.port, `127.0.0.1:${port}`), /^HTTP\/1\.1 407/)
    assert.match(await tunnel(proxy.port, `127.0.0.1:${port}`, `Proxy-Authorization: ${good}\r\n`), /^HTTP\/1\.1 200 Connection Established/)
    assert.deepEqual([proxy.stats().requests, proxy.stats().tunnels, proxy.stats().refused], [1, 1, 3])
  })
})
