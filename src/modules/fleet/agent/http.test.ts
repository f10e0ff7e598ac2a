// The site server's link client (issue 26) against loopback Fastify servers standing for the cloud: the headers it
// adds, the routes it takes (direct, HTTP_PROXY in absolute form, HTTPS_PROXY through CONNECT to a TLS cloud whose
// certificate is made here with openssl, NO_PROXY), its bodies, and how each failure is classified for the agent's
// loop — without the credential ever showing in a message. No database is involved: these run once, not per dialect.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { getEventListeners } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import Fastify, { type FastifyInstance } from 'fastify'
import { startHttpProxy } from '../../../../test/support/http-proxy.ts'
import { startTcpProxy } from '../../../../test/support/tcp-proxy.ts'
import { LINK_PROTOCOL, PROTOCOL_HEADER as LINK_PROTOCOL_HEADER } from '../site-servers/protocol.ts'
import { createLinkHttp, describeFailure, type LinkFailure, type LinkHttpOptions } from './http.ts'

const CREDENTIAL = 'slk_srv0123456789_S3cr3tS3cr3tS3cr3tS3cr3tS3cr3t'
const TIMEOUT_MS = 5_000

interface Seen {
  authorization: 'match' | 'other' | 'none'
  protocol: string | undefined
  accept: string | undefined
  host: string | undefined
  contentEncoding: string | undefined
  contentType: string | undefined
  sha256?: string
  bytes?: number
}

/** A stand-in for the cloud. */
async function fakeCloud(o: { tls?: { key: Buffer; cert: Buffer } }): Promise<{ app: FastifyInstance; port: number; hits: () => number }> {
  // One type for both: the routes below use nothing that differs between an http and an https server.
  const app = (o.tls ? Fastify({ https: { key: o.tls.key, cert: o.tls.cert } }) : Fastify()) as unknown as FastifyInstance
  let hits = 0

  app.addHook('onRequest', async (_request, reply) => {
    hits++
    reply.header(LINK_PROTOCOL_HEADER, String(LINK_PROTOCOL))
  })
  const seen = (request: { headers: Record<string, string | string[] | undefined> }): Seen => {
    const h = request.headers
    const auth = h.authorization
    return {
      authorization: auth === undefined ? 'none' : auth === `Bearer ${CREDENTIAL}` ? 'match' : 'other',
      protocol: h['sitegrid-link-protocol'] as string | undefined,
      accept: h.accept as string | undefined,
      host: h.host as string | undefined,
      contentEncoding: h['content-encoding'] as string | undefined,
      contentType: h['content-type'] as string | undefined,
    }
  }
  app.get('/api/link/echo', async (request) => seen(request))
  app.post('/api/link/echo', async (request) => {
    const text = JSON.stringify(request.body)
    return { ...seen(request), sha256: createHash('sha256').update(text).digest('hex'), bytes: Buffer.byteLength(text) }
  })
  app.get('/prefixed/api/link/echo', async (request) => seen(request))
  app.get('/api/link/slow', async () => {
    await new Promise((resolve) => setTimeout(resolve, 60_000).unref())
    return {}
  })
  const problem = (status: number, code: string, detail: string) => ({ type: `https://docs/${code}`, title: code, status, code, detail })
  app.get('/api/link/answer/:status/:code', async (request, reply) => {
    const { status, code } = request.params as { status: string; code: string }
    if (code === 'Retry') reply.header('retry-after', '7')
    if (code === 'OtherProtocol') reply.header(LINK_PROTOCOL_HEADER, String(LINK_PROTOCOL + 1))
    return reply
      .code(Number(status))
      .type('application/problem+json')
      .send(problem(Number(status), code, `detail of ${code}`))
  })
  app.get('/api/link/stall-body', async (_request, reply) => {
    reply.hijack()
    reply.raw.writeHead(200, { 'content-type': 'application/json', [LINK_PROTOCOL_HEADER]: String(LINK_PROTOCOL) })
    reply.raw.write('{"changes":[')
  })
  app.get('/api/link/trickle', async (_request, reply) => {
    reply.hijack()
    reply.raw.writeHead(200, { 'content-type': 'application/octet-stream', [LINK_PROTOCOL_HEADER]: String(LINK_PROTOCOL) })
    for (let i = 0; i < 30; i++) {
      reply.raw.write(Buffer.alloc(100, i))
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    reply.raw.end()
  })
  app.get('/api/link/nothing', async (_request, reply) => reply.code(204).send())
  app.get('/api/link/redirect', async (_request, reply) => reply.redirect('http://portal.example/login'))
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as { port: number }).port, hits: () => hits }
}

function makeCertificate(dir: string): { key: Buffer; cert: Buffer } {
  const key = join(dir, 'key.pem')
  const cert = join(dir, 'cert.pem')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=acme.localhost',
      '-addext',
      'subjectAltName=DNS:acme.localhost,DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  )
  return { key: readFileSync(key), cert: readFileSync(cert) }
}

/** The message of `err` and of every cause under it. */
function messages(err: unknown): string {
  const out: string[] = []
  for (let e = err, depth = 0; e && depth < 10; e = (e as { cause?: unknown }).cause, depth++) out.push(String((e as { message?: unknown }).message ?? e))
  return out.join(' | ')
}

/** The failure of one call: the thrown error's, or the non-2xx response's. */
async function failureOf(
  client: ReturnType<typeof createLinkHttp>,
  path = '/api/link/echo',
  init: Parameters<typeof client.request>[1] = { method: 'GET' },
): Promise<LinkFailure> {
  try {
    const res = await client.request(path, init)
    if (res.ok) throw new Error(`expected a failure, got ${res.status}`)
    return await client.describeFailure(res)
  } catch (err) {
    assert.ok(!messages(err).includes(CREDENTIAL), 'the thrown error names no credential')
    return client.describeFailure(err)
  }
}

describe('fleet link HTTP client', () => {
  let dir: string
  let tls: { key: Buffer; cert: Buffer }
  let plain: Awaited<ReturnType<typeof fakeCloud>>
  let secure: Awaited<ReturnType<typeof fakeCloud>>
  const clients: Array<{ close(): Promise<void> }> = []
  const client = (o: Partial<LinkHttpOptions> & { cloudUrl: string }) => {
    const c = createLinkHttp({ credential: CREDENTIAL, env: {}, timeoutMs: TIMEOUT_MS, ...o })
    clients.push(c)
    return c
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sitegrid-link-http-'))
    tls = makeCertificate(dir)
    plain = await fakeCloud({})
    secure = await fakeCloud({ tls })
  })
  after(async () => {
    for (const c of clients) await c.close()
    await plain.app.close()
    await secure.app.close()
    rmSync(dir, { recursive: true, force: true })
  })

  describe('headers and routes', () => {
    it('adds the bearer credential, the protocol header and Accept: application/json, under the cloud URL and its path prefix', async () => {
      const direct = client({ cloudUrl: `http://127.0.0.1:${plain.port}` })
      const res = await direct.request('/api/link/echo', { method: 'GET' })
      assert.equal(res.status, 200)
      assert.ok(res instanceof Response, 'a global Response, not undici’s own class')
      assert.equal(res.headers.get(LINK_PROTOCOL_HEADER), String(LINK_PROTOCOL))
      const seen = (await res.json()) as Seen
      assert.deepEqual([seen.authorization, seen.protocol, seen.accept], ['match', String(LINK_PROTOCOL), 'application/json'])
      const prefixed = client({ cloudUrl: `http://127.0.0.1:${plain.port}/prefixed/` })
      assert.equal((await prefixed.request('/api/link/echo', { method: 'GET' })).status, 200)
    })

    it('sends no Authorization without a credential (enrolment), and a caller header cannot replace the protocol header', async () => {
      const anonymous = createLinkHttp({ cloudUrl: `http://127.0.0.1:${plain.port}`, env: {}, timeoutMs: TIMEOUT_MS })
      clients.push(anonymous)
      const res = await anonymous.request('/api/link/echo', { method: 'GET', headers: { 'Sitegrid-Link-Protocol': '9' } })
      const seen = (await res.json()) as Seen
      assert.equal(seen.authorization, 'none')
      assert.equal(seen.protocol, String(LINK_PROTOCOL))
    })

    it('`{slug}.localhost` reaches the loopback cell with the Host header naming the organisation', async () => {
      const direct = client({ cloudUrl: `http://acme.localhost:${plain.port}` })
      const seen = (await (await direct.request('/api/link/echo', { method: 'GET' })).json()) as Seen
      assert.equal(seen.host, `acme.localhost:${plain.port}`)
    })

    it('HTTP_PROXY: an http:// cloud is reached through the proxy in absolute form, and the proxy counts it', async (t) => {
      const proxy = await startHttpProxy()
      t.after(() => proxy.close())
      const before = plain.hits()
      const via = client({ cloudUrl: `http://acme.localhost:${plain.port}`, env: { HTTP_PROXY: proxy.url } })
      const res = await via.request('/api/link/echo', { method: 'POST', body: { hello: 'proxy' } })
      const seen = (await res.json()) as Seen
      assert.equal(res.status, 200)
      assert.equal(seen.authorization, 'match')
      assert.equal(seen.host, `acme.localhost:${plain.port}`)
      const stats = proxy.stats()
      assert.equal(stats.requests, 1)
      assert.equal(stats.tunnels, 0)
      assert.deepEqual(stats.targets, [`acme.localhost:${plain.port}`])
      assert.ok(stats.bytesUp > 0 && stats.bytesDown > 0)
      assert.equal(plain.hits() - before, 1)
    })

    for (const variable of ['HTTPS_PROXY', 'https_proxy'] as const) {
      it(`${variable}: an https:// cloud with a certificate trusted through \`ca\` is reached through a CONNECT tunnel`, async (t) => {
        const proxy = await startHttpProxy()
        t.after(() => proxy.close())
        const via = client({ cloudUrl: `https://acme.localhost:${secure.port}`, env: { [variable]: proxy.url }, ca: tls.cert })
        const res = await via.request('/api/link/echo', { method: 'GET' })
        assert.equal(res.status, 200)
        const seen = (await res.json()) as Seen
        assert.equal(seen.authorization, 'match')
        assert.equal(seen.host, `acme.localhost:${secure.port}`)
        const stats = proxy.stats()
        assert.equal(stats.tunnels, 1)
        assert.equal(stats.requests, 0)
        assert.deepEqual(stats.targets, [`acme.localhost:${secure.port}`])
        assert.ok(stats.bytesUp > 0 && stats.bytesDown > 0, 'the TLS bytes went through the tunnel')
      })
    }

    it('HTTP_PROXY alone also carries an https:// cloud (through CONNECT)', async (t) => {
      const proxy = await startHttpProxy()
      t.after(() => proxy.close())
      const via = client({ cloudUrl: `https://acme.localhost:${secure.port}`, env: { HTTP_PROXY: proxy.url }, ca: tls.cert })
      assert.equal((await via.request('/api/link/echo', { method: 'GET' })).status, 200)
      assert.equal(proxy.stats().tunnels, 1)
    })

    it('the lower-case form wins over the upper-case one, as curl reads them', async (t) => {
      const [lower, upper] = [await startHttpProxy(), await startHttpProxy()]
      t.after(() => Promise.all([lower.close(), upper.close()]))
      const via = client({ cloudUrl: `https://acme.localhost:${secure.port}`, env: { https_proxy: lower.url, HTTPS_PROXY: upper.url }, ca: tls.cert })
      assert.equal((await via.request('/api/link/echo', { method: 'GET' })).status, 200)
      assert.equal(lower.stats().tunnels, 1)
      assert.equal(upper.stats().tunnels + upper.stats().requests, 0)
    })

    const bypasses: Array<[label: string, value: (port: number) => string]> = [
      ['acme.localhost', () => 'acme.localhost'],
      ['.localhost (a suffix)', () => '.localhost'],
      ['acme.localhost:<port>', (port) => `acme.localhost:${port}`],
      ['*', () => '*'],
    ]
    for (const [label, value] of bypasses) {
      it(`NO_PROXY=${label} bypasses the proxy: it sees nothing and the cloud still answers`, async (t) => {
        const proxy = await startHttpProxy()
        t.after(() => proxy.close())
        const via = client({ cloudUrl: `https://acme.localhost:${secure.port}`, env: { HTTPS_PROXY: proxy.url, NO_PROXY: value(secure.port) }, ca: tls.cert })
        assert.equal((await via.request('/api/link/echo', { method: 'GET' })).status, 200)
        const stats = proxy.stats()
        assert.equal(stats.tunnels + stats.requests + stats.targets.length, 0)
      })
    }

    it('NO_PROXY naming another host leaves the cloud behind the proxy', async (t) => {
      const proxy = await startHttpProxy()
      t.after(() => proxy.close())
      const via = client({
        cloudUrl: `https://acme.localhost:${secure.port}`,
        env: { HTTPS_PROXY: proxy.url, no_proxy: 'other.localhost,10.0.0.1' },
        ca: tls.cert,
      })
      assert.equal((await via.request('/api/link/echo', { method: 'GET' })).status, 200)
      assert.equal(proxy.stats().tunnels, 1)
    })

    it("proxy variables are read from the `env` passed, never from the process's own", async (t) => {
      const proxy = await startHttpProxy()
      t.after(() => proxy.close())
      const saved = process.env.HTTP_PROXY
      process.env.HTTP_PROXY = proxy.url
      t.after(() => {
        if (saved === undefined) delete process.env.HTTP_PROXY
        else process.env.HTTP_PROXY = saved
      })
      const direct = client({ cloudUrl: `http://127.0.0.1:${plain.port}`, env: {} })
      assert.equal((await direct.request('/api/link/echo', { method: 'GET' })).status, 200)
      assert.equal(proxy.stats().requests, 0)
    })
  })

  describe('bodies', () => {
    const big = { changes: Array.from({ length: 2000 }, (_, i) => ({ seq: i, table: 'alarm_events', row: { note: `event ${i} ${'x'.repeat(40)}` } })) }
    const digest = createHash('sha256').update(JSON.stringify(big)).digest('hex')

    it('a body goes plain (the cloud refuses a Content-Encoding): an object as JSON, a string as it is (JSON by default), bytes as bytes', async () => {
      const c = client({ cloudUrl: `http://127.0.0.1:${plain.port}` })
      const object = (await (await c.request('/api/link/echo', { method: 'POST', body: big })).json()) as Seen
      assert.deepEqual([object.contentType, object.contentEncoding, object.sha256], ['application/json', undefined, digest])
      const text = JSON.stringify(big)
      const seen = (await (await c.request('/api/link/echo', { method: 'POST', body: text })).json()) as Seen
      assert.deepEqual([seen.contentType, seen.contentEncoding, seen.sha256], ['application/json', undefined, digest])
      const bytes = (await (
        await c.request('/api/link/echo', { method: 'POST', body: Buffer.from('{"a":1}'), headers: { 'Content-Type': 'application/json' } })
      ).json()) as Seen
      assert.equal(bytes.sha256, createHash('sha256').update('{"a":1}').digest('hex'))
    })

    it('a 204 answer comes back with a null body', async () => {
      const c = client({ cloudUrl: `http://127.0.0.1:${plain.port}` })
      const res = await c.request('/api/link/nothing', { method: 'GET' })
      assert.deepEqual([res.status, res.body], [204, null])
    })
  })

  describe('failures', () => {
    it('a timeout is offline (timeout), and a caller that aborts gets aborted, not offline', async () => {
      const c = client({ cloudUrl: `http://127.0.0.1:${plain.port}` })
      const timedOut = await failureOf(c, '/api/link/slow', { method: 'GET', timeoutMs: 200 })
      assert.equal(timedOut.kind, 'offline')
      assert.equal(timedOut.kind === 'offline' && timedOut.reason, 'timeout')
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 100)
      const aborted = await failureOf(c, '/api/link/slow', { method: 'GET', signal: controller.signal })
      assert.equal(aborted.kind, 'aborted')
    })

    it('a body that stalls after the headers fails as offline (timeout) once idle for timeoutMs', async () => {
      const c = client({ cloudUrl: `http://127.0.0.1:${plain.port}`, timeoutMs: 300 })
      const res = await c.request('/api/link/stall-body', { method: 'GET' })
      assert.equal(res.status, 200)
      const failure = await res.text().then(
        () => assert.fail('the stalled body completed'),
        (err: unknown) => c.describeFailure(err),
      )
      assert.deepEqual([failure.kind, failure.kind === 'offline' && failure.reason], ['offline', 'timeout'])
    })

    it('a body that keeps coming is never cut by the deadline, however long it takes in all', async () => {
      const c = client({ cloudUrl: `http://127.0.0.1:${plain.port}`, timeoutMs: 1000 })
      const res = await c.request('/api/link/trickle', { method: 'GET' })
      assert.equal((await res.arrayBuffer()).byteLength, 3000)
    })

    it('the caller aborting during the body read stops it as aborted', async () => {
      const c = client({ cloudUrl: `http://127.0.0.1:${plain.port}` })
      const controller = new AbortController()
      const res = await c.request('/api/link/stall-body', { method: 'GET', signal: controller.signal })
      setTimeout(() => controller.abort(), 50)
      const failure = await res.text().then(
        () => assert.fail('the stalled body completed'),
        (err: unknown) => c.describeFailure(err),
      )
      assert.equal(failure.kind, 'aborted')
    })

    it('a long-lived caller signal keeps no listener once a call failed, its body was read, or its body was cancelled', async () => {
      const shutdown = new AbortController()
      const listeners = () => getEventListeners(shutdown.signal, 'abort').length
      const c = client({ cloudUrl: `http://127.0.0.1:${plain.port}` })
      await failureOf(client({ cloudUrl: 'http://127.0.0.1:1' }), '/api/link/echo', { method: 'GET', signal: shutdown.signal })
      assert.equal(listeners(), 0, 'a refused connection')
      const read = await c.request('/api/link/echo', { method: 'GET', signal: shutdown.signal })
      assert.equal(listeners(), 1, 'held while the body may still be read')
      await read.json()
      assert.equal(listeners(), 0, 'a body read to its end')
      const cancelled = await c.request('/api/link/stall-body', { method: 'GET', signal: shutdown.signal })
      await cancelled.body?.cancel()
      assert.equal(listeners(), 0, 'a body cancelled')
      const empty = await c.request('/api/link/nothing', { method: 'GET', signal: shutdown.signal })
      assert.equal(empty.status, 204)
      assert.equal(listeners(), 0, 'an answer without a body')
    })

    it('a refused connection is offline (refused)', async (t) => {
      const spare = Fastify()
      await spare.listen({ port: 0, host: '127.0.0.1' })
      const port = (spare.server.address() as { port: number }).port
      await spare.close()
      const c = client({ cloudUrl: `http://127.0.0.1:${port}` })
      const failure = await failureOf(c)
      t.diagnostic(failure.message)
      assert.deepEqual([failure.kind, failure.kind === 'offline' && failure.reason], ['offline', 'refused'])
    })

    it('a link cut by the tcp proxy is offline, before and during the request, and heals', async (t) => {
      const wire = await startTcpProxy(plain.port)
      t.after(() => wire.close())
      const c = client({ cloudUrl: `http://acme.localhost:${wire.port}` })
      assert.equal((await c.request('/api/link/echo', { method: 'GET' })).status, 200)
      wire.cut()
      const cut = await failureOf(c, '/api/link/echo')
      t.diagnostic(cut.message)
      assert.equal(cut.kind, 'offline')
      wire.heal()
      const pending = failureOf(c, '/api/link/slow')
      while (wire.stats().bytesUp === 0 || wire.stats().open === 0) await new Promise((resolve) => setTimeout(resolve, 10))
      wire.cut()
      const during = await pending
      t.diagnostic(during.message)
      assert.equal(during.kind, 'offline')
      wire.heal()
      assert.equal((await c.request('/api/link/echo', { method: 'GET' })).status, 200)
    })

    it('a silent link (packets dropped, as in a WAN outage) is offline (timeout) at the deadline, and heals', async (t) => {
      const wire = await startTcpProxy(plain.port)
      t.after(() => wire.close())
      const c = client({ cloudUrl: `http://acme.localhost:${wire.port}` })
      wire.setMode('blackhole')
      const failure = await failureOf(c, '/api/link/echo', { method: 'GET', timeoutMs: 300 })
      assert.deepEqual([failure.kind, failure.kind === 'offline' && failure.reason], ['offline', 'timeout'])
      wire.heal()
      assert.equal((await c.request('/api/link/echo', { method: 'GET' })).status, 200)
    })

    it('a TLS cloud whose certificate is not trusted is offline (tls), with no ca', async () => {
      const c = client({ cloudUrl: `https://acme.localhost:${secure.port}` })
      const failure = await failureOf(c)
      assert.deepEqual([failure.kind, failure.kind === 'offline' && failure.reason], ['offline', 'tls'])
    })

    it('a corrupted TLS stream fails the request as offline, never as an answer', async (t) => {
      const wire = await startTcpProxy(secure.port)
      t.after(() => wire.close())
      const c = client({ cloudUrl: `https://acme.localhost:${wire.port}`, ca: tls.cert })
      wire.corruptNext(4, 'down', { skip: 400 })
      const failure = await failureOf(c, '/api/link/echo')
      t.diagnostic(failure.message)
      assert.equal(failure.kind, 'offline')
      assert.ok(wire.stats().corruptedDown > 0)
    })

    it('a proxy that refuses the CONNECT is offline (proxy)', async (t) => {
      const proxy = await startHttpProxy({ deny: () => true })
      t.after(() => proxy.close())
      const via = client({ cloudUrl: `https://acme.localhost:${secure.port}`, env: { HTTPS_PROXY: proxy.url }, ca: tls.cert })
      const failure = await failureOf(via)
      assert.deepEqual([failure.kind, failure.kind === 'offline' && failure.reason], ['offline', 'proxy'])
      assert.equal(proxy.stats().refused, 1)
    })

    it('a proxy password in HTTPS_PROXY authenticates to the proxy and never shows in a message', async (t) => {
      const proxy = await startHttpProxy({ auth: { user: 'plant', password: 'Pr0xyPass' } })
      t.after(() => proxy.close())
      const good = client({
        cloudUrl: `https://acme.localhost:${secure.port}`,
        env: { HTTPS_PROXY: `http://plant:Pr0xyPass@127.0.0.1:${proxy.port}` },
        ca: tls.cert,
      })
      assert.equal((await good.request('/api/link/echo', { method: 'GET' })).status, 200)
      const failing = client({ cloudUrl: `https://acme.localhost:${secure.port}`, env: { HTTPS_PROXY: `http://plant:Pr0xyPass@127.0.0.1:${proxy.port}` } })
      const failure = await failureOf(failing)
      assert.ok(!failure.message.includes('Pr0xyPass'))
    })

    const answers: Array<[status: number, code: string, kind: LinkFailure['kind']]> = [
      [401, 'Unauthorized', 'unauthorized'],
      [409, 'LinkVersionMismatch', 'version'],
      [409, 'LinkDiverged', 'diverged'],
      [409, 'Conflict', 'refused'],
      [400, 'ValidationFailed', 'refused'],
      [403, 'Forbidden', 'refused'],
      [500, 'InternalError', 'server'],
      [503, 'Retry', 'server'],
      [429, 'RateLimited', 'server'],
      [200, 'OtherProtocol', 'version'],
    ]
    for (const [status, code, kind] of answers) {
      it(`${status} ${code} is ${kind}${kind === 'refused' ? ', with the problem code and detail' : ''}, and the message names no credential`, async () => {
        const c = client({ cloudUrl: `http://127.0.0.1:${plain.port}` })
        const res = await c.request(`/api/link/answer/${status}/${code}`, { method: 'GET' })
        const failure = await c.describeFailure(res)
        assert.equal(failure.kind, kind)
        assert.ok(!failure.message.includes(CREDENTIAL))
        if (failure.kind === 'refused') assert.deepEqual([failure.status, failure.code, failure.detail], [status, code, `detail of ${code}`])
        if (code === 'Retry' && failure.kind === 'server') assert.equal(failure.retryAfterMs, 7000)
      })
    }

    it('a redirect (a captive portal) is not followed: offline (redirect)', async () => {
      const c = client({ cloudUrl: `http://127.0.0.1:${plain.port}` })
      const failure = await failureOf(c, '/api/link/redirect')
      assert.deepEqual([failure.kind, failure.kind === 'offline' && failure.reason], ['offline', 'redirect'])
    })

    it('describeFailure redacts what it is told to, even from a server detail that echoes it', async () => {
      const failure = await describeFailure(
        new Response(JSON.stringify({ code: 'BadRequest', detail: `no such key ${CREDENTIAL}` }), {
          status: 400,
          headers: { 'content-type': 'application/problem+json' },
        }),
        [CREDENTIAL],
      )
      assert.equal(failure.kind, 'refused')
      assert.ok(!failure.message.includes(CREDENTIAL))
      assert.ok(failure.kind === 'refused' && !failure.detail?.includes(CREDENTIAL))
    })

    it('a credential a header cannot carry is refused at construction without echoing it', () => {
      assert.throws(
        () => createLinkHttp({ cloudUrl: 'https://acme.localhost', credential: 'slk_abc\nsecret-part', env: {}, timeoutMs: 1000 }),
        (err: Error) => err instanceof TypeError && !err.message.includes('secret-part'),
      )
    })
  })
})
