// Session 24: requests that Node's HTTP parser refuses before any route reads them (a broken request line, header
// line or body framing, headers over 16 KiB, a request slower than its timeouts), on a real listening server: each is
// answered with a problem document like every other refusal, not Fastify's own JSON nor a bodiless status, changes
// nothing, and leaves no credential in the log.
import assert from 'node:assert/strict'
import { connect, type AddressInfo } from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import { harness, sleep, testDialects } from './harness.ts'
import { NO_RATE_LIMIT } from './hardening/support.ts'

interface Answer {
  status: number
  headers: string
  body: string
  /** Milliseconds from the first byte written to the connection's end. */
  tookMs: number
}

/** Writes `parts` on one connection (waiting `pauseMs` between them) and reads until the server closes it. */
function raw(port: number, parts: ReadonlyArray<string | Buffer>, pauseMs = 0): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const started = performance.now()
    socket.on('data', (d: Buffer) => chunks.push(d))
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const split = text.indexOf('\r\n\r\n')
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]),
        headers: text.slice(0, split),
        body: text.slice(split + 4),
        tookMs: performance.now() - started,
      })
    })
    socket.on('error', reject)
    void (async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0) await sleep(pauseMs)
        if (!socket.destroyed) socket.write(part)
      }
    })()
  })
}

async function server(t: TestContext, env: Record<string, string> = {}) {
  const h = await harness(t, testDialects()[0]!, { ...NO_RATE_LIMIT, ...env })
  const { org, key } = await h.orgWithKey()
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (h.app.server.address() as AddressInfo).port
  const sites = async () => (await h.inject({ org, apiKey: key }, { method: 'GET', url: '/api/sites' })).json<{ items: unknown[] }>().items.length
  return { h, org, key, port, sites }
}

/** The answer is a problem document of `code` and `status`, served as one and closing the connection. */
function assertProblem(answer: Answer, status: number, code: string): { detail: string; instance: string } {
  assert.equal(answer.status, status, answer.headers)
  assert.match(answer.headers, /^content-type: application\/problem\+json$/im)
  assert.match(answer.headers, /^x-content-type-options: nosniff$/im)
  assert.match(answer.headers, /^connection: close$/im)
  assert.equal(Number(/^content-length: (\d+)$/im.exec(answer.headers)?.[1]), Buffer.byteLength(answer.body))
  const problem = JSON.parse(answer.body) as Record<string, string>
  assert.deepEqual([problem.type, problem.status, problem.code], [`/problems/${code}`, status, code])
  assert.match(problem.instance!, /^[0-9a-f]{8}-[0-9a-f]{8}$/, 'the request id, as every answer carries')
  return { detail: problem.detail!, instance: problem.instance! }
}

describe('requests the HTTP parser refuses, on a real server', () => {
  it('a broken request line, header line or body framing: 400 MalformedRequest naming the part and the rule; nothing created; the key sent is not logged', async (t) => {
    const { h, org, key, port, sites } = await server(t)
    const host = `Host: ${org.slug}.localhost`
    const post = (headers: string, body: string) =>
      `POST /api/sites HTTP/1.1\r\n${host}\r\nX-Api-Key: ${key}\r\nContent-Type: application/json\r\n${headers}\r\n\r\n${body}`
    const site = JSON.stringify({ code: 'PLANT1', name: 'Plant 1' })
    const cases: Array<[string, string, RegExp]> = [
      ['a header line without a colon', `GET /api/me HTTP/1.1\r\n${host}\r\nX-Api-Key: ${key}\r\nnot a header\r\n\r\n`, /a header line: Invalid header token/],
      [
        'a control character in a header value',
        `GET /api/me HTTP/1.1\r\n${host}\r\nX-Api-Key: ${key}\u0001\r\n\r\n`,
        /a header line: Invalid header value char/,
      ],
      ['an unknown HTTP version', `GET /api/me HTTP/9.9\r\n${host}\r\n\r\n`, /the request line \(its HTTP version\)/],
      ['a method with a character no token holds', `G@T /api/me HTTP/1.1\r\n${host}\r\n\r\n`, /the request line \(its method\)/],
      [
        'Content-Length and Transfer-Encoding both (request smuggling)',
        post(`Content-Length: ${site.length}\r\nTransfer-Encoding: chunked`, `${site.length.toString(16)}\r\n${site}\r\n0\r\n\r\n`),
        /the body's framing \(Transfer-Encoding\)/,
      ],
      ['a Content-Length that is not a number', post('Content-Length: 4x', site), /the body's framing \(Content-Length\)/],
      ['a chunk size that is not hexadecimal', post('Transfer-Encoding: chunked', `zz\r\n${site}\r\n0\r\n\r\n`), /the body's framing \(a chunk\)/],
    ]
    const instances = new Set<string>()
    for (const [what, request, rule] of cases) {
      const { detail, instance } = assertProblem(await raw(port, [request]), 400, 'MalformedRequest')
      assert.match(detail, /^The request is not well-formed HTTP\/1\.1 \(RFC 9112\): /, what)
      assert.match(detail, rule, what)
      assert.ok(!detail.includes(key), 'the detail echoes nothing the client sent')
      instances.add(instance)
    }
    assert.equal(instances.size, cases.length, 'each answer has its own id')
    assert.equal(await sites(), 0, 'no refused request created a site')
    assert.ok(!h.rawLogs().includes(key), 'the key sent in refused requests is in no log line')
    // The problem page the type names.
    const page = await h.app.inject({ method: 'GET', url: '/problems/MalformedRequest' })
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /^MalformedRequest \(400\): The request is not well-formed HTTP/)
  })

  it('headers over 16 KiB: 431 HeadersTooLarge, a chunk extension over 16 KiB 413 PayloadTooLarge, and the connection closed', async (t) => {
    const { org, port } = await server(t)
    const answer = await raw(port, [`GET /api/me HTTP/1.1\r\nHost: ${org.slug}.localhost\r\nX-Pad: ${'a'.repeat(17_000)}\r\n\r\n`])
    const { detail } = assertProblem(answer, 431, 'HeadersTooLarge')
    assert.equal(detail, 'The request line and headers exceed 16 KiB.')
    // A chunk's extensions, which Node's parser bounds as it bounds the headers.
    const extended = await raw(port, [
      `POST /api/sites HTTP/1.1\r\nHost: ${org.slug}.localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2;x=${'a'.repeat(20_000)}\r\n{}\r\n0\r\n\r\n`,
    ])
    assert.equal(assertProblem(extended, 413, 'PayloadTooLarge').detail, "A chunk's extensions exceed 16 KiB.")
  })

  it("headers slower than SITEGRID_HEADERS_TIMEOUT_MS, and a body slower than SITEGRID_REQUEST_TIMEOUT_MS: 408 RequestTimeout soon after the timeout (not at Node's own check, up to 31 s later); nothing created", async (t) => {
    const { org, key, port, sites } = await server(t, { SITEGRID_HEADERS_TIMEOUT_MS: '1000', SITEGRID_REQUEST_TIMEOUT_MS: '2000' })
    const head = `POST /api/sites HTTP/1.1\r\nHost: ${org.slug}.localhost\r\nX-Api-Key: ${key}\r\nContent-Type: application/json\r\n`
    const site = JSON.stringify({ code: 'PLANT1', name: 'Plant 1' })
    // Headers dribbled one line a second: past 1 s before they end.
    const slowHeaders = await raw(port, [head, 'X-A: 1\r\n', 'X-B: 2\r\n', `Content-Length: ${site.length}\r\n\r\n${site}`], 700)
    assert.match(assertProblem(slowHeaders, 408, 'RequestTimeout').detail, /SITEGRID_HEADERS_TIMEOUT_MS/)
    assert.ok(slowHeaders.tookMs < 1_000 + 100 + 3_000, `answered after ${Math.round(slowHeaders.tookMs)} ms (Node's own check would take up to 31 s)`)
    // Headers whole, half the body, then nothing: past 2 s.
    const slowBody = await raw(port, [`${head}Content-Length: ${site.length}\r\n\r\n${site.slice(0, 10)}`, site.slice(10)], 4_000)
    assertProblem(slowBody, 408, 'RequestTimeout')
    assert.ok(slowBody.tookMs < 2_000 + 200 + 3_000, `answered after ${Math.round(slowBody.tookMs)} ms`)
    assert.equal(await sites(), 0)
  })
})
