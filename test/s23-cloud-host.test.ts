// Session 23 (part HN): the Host header as a hostile tenant sends it to a cloud cell, on a real listening server (the
// Node parser, not inject): the spellings of one host, two Host headers, an absolute-form target, HTTP/1.0 without a
// Host, and the forwarded headers with the proxy trusted and not.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { connect, type AddressInfo } from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import { harness, testDialects } from './harness.ts'
import { NO_RATE_LIMIT, stableBody } from './hardening/support.ts'

interface Answer {
  status: number
  headers: string
  body: string
}

/**
 * One request written byte for byte on its own connection; the answer read until the server closes it (`Connection:
 * close`; the socket stays open for writing, since Node's server drops a half-closed connection it has not answered yet).
 */
function raw(port: number, request: string | Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (d: Buffer) => chunks.push(d))
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const split = text.indexOf('\r\n\r\n')
      const headers = text.slice(0, split)
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(headers)?.[1]), headers, body: decodeChunked(headers, text.slice(split + 4)) })
    })
    socket.on('error', reject)
    socket.write(request)
  })
}

function decodeChunked(headers: string, body: string): string {
  if (!/transfer-encoding: chunked/i.test(headers)) return body
  let out = ''
  for (let rest = body; ; ) {
    const eol = rest.indexOf('\r\n')
    const size = Number.parseInt(rest.slice(0, eol), 16)
    if (!size) return out
    out += rest.slice(eol + 2, eol + 2 + size)
    rest = rest.slice(eol + 2 + size + 2)
  }
}

const get = (target: string, headers: string[], version = '1.1') => `GET ${target} HTTP/${version}\r\n${[...headers, 'Connection: close'].join('\r\n')}\r\n\r\n`

async function cell(t: TestContext, dialect: 'sqlite' | 'postgres', env: Record<string, string> = {}) {
  const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_MODE: 'cloud', ...env })
  const [a, b] = [await h.orgWithKey(), await h.orgWithKey()]
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (h.app.server.address() as AddressInfo).port
  const send = (request: string | Buffer) => raw(port, request)
  // Who the server took the caller to be: the organisation /api/me answers, or the refusal's status.
  const servedAs = async (request: string | Buffer) => {
    const res = await send(request)
    return res.status === 200 ? (JSON.parse(res.body) as { orgSlug: string }).orgSlug : res.status
  }
  const uniform401 = stableBody((await send(get('/api/me', [`Host: ${a.org.slug}.localhost`, 'X-Api-Key: csk_wrong']))).body)
  return { h, a, b, send, servedAs, uniform401 }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: the Host header of a cloud cell on a real server, and of a site server's bindings`, () => {
    it("one host, however spelled (upper case, a port, the fully qualified name's trailing dot), serves its organisation", async (t) => {
      const { a, servedAs } = await cell(t, dialect)
      const key = `X-Api-Key: ${a.key}`
      assert.equal(await servedAs(get('/api/me', [`Host: ${a.org.slug.toUpperCase()}.LOCALHOST`, key])), a.org.slug)
      assert.equal(await servedAs(get('/api/me', [`Host: ${a.org.slug}.localhost:8443`, key])), a.org.slug)
      assert.equal(await servedAs(get('/api/me', [`Host: ${a.org.slug}.localhost.`, key])), a.org.slug, 'the trailing dot names the same host')
      assert.equal(await servedAs(get('/api/me', [`Host: ${a.org.slug}.localhost.:8443`, key])), a.org.slug)
      assert.equal(await servedAs(get('/api/me', [`Host: ${a.org.slug}.localhost..`, key])), 401, 'two dots are no host name')
    })

    it("on a site server a disabled custom domain stays an unknown host when spelled with a trailing dot or upper case (not the site's organisation)", async (t) => {
      // Named: a PostgreSQL database of the test run may hold other tests' organisations (then no one is "the only one").
      const slug = `site-${randomBytes(4).toString('hex')}`
      const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_MODE: 'site', SITEGRID_SITE_ORG: slug })
      const org = await h.createOrg(slug)
      const a = { org, key: (await h.mintKey(org)).plaintext }
      const domain = `plant-${a.org.slug}.example.com`
      const bound = await h.inject({ org: a.org, apiKey: a.key }, { method: 'POST', url: `/api/admin/orgs/${a.org.slug}/domains`, payload: { domain } })
      assert.equal(bound.statusCode, 201, bound.body)
      for (const host of [domain, `${domain}.`, `${domain.toUpperCase()}.`]) {
        assert.equal((await h.inject({ org: a.org, apiKey: a.key }, { url: '/api/me', host })).statusCode, 401, host)
      }
      assert.equal(
        (await h.inject({ org: a.org, apiKey: a.key }, { url: '/api/me', host: 'plant-box.example.net' })).statusCode,
        200,
        'an unbound host serves the site',
      )
    })

    it('two Host headers are a 400 naming the header (RFC 9112 §3.2), whichever organisation each names and whose key is sent', async (t) => {
      const { a, b, send } = await cell(t, dialect)
      for (const key of [a.key, b.key]) {
        for (const hosts of [
          [a.org.slug, b.org.slug],
          [a.org.slug, a.org.slug],
        ]) {
          const res = await send(get('/api/me', [...hosts.map((s) => `Host: ${s}.localhost`), `X-Api-Key: ${key}`]))
          assert.equal(res.status, 400, res.body)
          assert.match(res.headers, /content-type: application\/problem\+json/i)
          const problem = JSON.parse(res.body) as { code: string; errors: unknown[] }
          assert.equal(problem.code, 'ValidationFailed')
          assert.deepEqual(problem.errors, [{ in: 'headers', pointer: '/host', message: 'must appear once (RFC 9112 §3.2)' }])
        }
      }
      // A public route too: the rule is the request's, not the credential's.
      assert.equal((await send(get('/healthz', [`Host: ${a.org.slug}.localhost`, `host: ${b.org.slug}.localhost`]))).status, 400)
    })

    it("an absolute-form target names the organisation and the Host header is ignored (RFC 9112 §3.2.2): A's key there is the uniform 401, B's is served as B", async (t) => {
      const { a, b, send, servedAs, uniform401 } = await cell(t, dialect)
      const target = `http://${b.org.slug}.localhost/api/me`
      const asA = await send(get(target, [`Host: ${a.org.slug}.localhost`, `X-Api-Key: ${a.key}`]))
      assert.equal(asA.status, 401)
      assert.deepEqual(stableBody(asA.body), uniform401, 'nothing tells A that B exists')
      assert.equal(await servedAs(get(target, [`Host: ${a.org.slug}.localhost`, `X-Api-Key: ${b.key}`])), b.org.slug)
      assert.equal(
        await servedAs(get(`HTTP://${b.org.slug.toUpperCase()}.LOCALHOST:80/api/me`, [`Host: ${a.org.slug}.localhost`, `X-Api-Key: ${b.key}`])),
        b.org.slug,
      )
      // The authority's user information is no host.
      assert.equal(
        await servedAs(get(`http://${a.org.slug}.localhost@${b.org.slug}.localhost/api/me`, [`Host: ${a.org.slug}.localhost`, `X-Api-Key: ${a.key}`])),
        401,
      )
    })

    it('no usable host (HTTP/1.0 without Host, an empty Host, an IPv6 or IPv4 literal, a Unicode or punycode name, a bare slug) is the uniform 401, and public routes still answer', async (t) => {
      const { a, send, uniform401 } = await cell(t, dialect)
      const key = `X-Api-Key: ${a.key}`
      const requests: Record<string, string | Buffer> = {
        'HTTP/1.0 without Host': get('/api/me', [key], '1.0'),
        'an empty Host': get('/api/me', ['Host: ', key]),
        'an IPv6 literal': get('/api/me', ['Host: [::1]:8080', key]),
        'an IPv4 literal': get('/api/me', ['Host: 127.0.0.1', key]),
        'a punycode name': get('/api/me', [`Host: xn--${a.org.slug}-9ya.localhost`, key]),
        'a UTF-8 name': Buffer.from(get('/api/me', [`Host: ${a.org.slug}é.localhost`, key]), 'utf8'),
        'a bare slug': get('/api/me', [`Host: ${a.org.slug}`, key]),
        'the base domain': get('/api/me', ['Host: localhost', key]),
        'a sub-subdomain': get('/api/me', [`Host: x.${a.org.slug}.localhost`, key]),
      }
      for (const [name, request] of Object.entries(requests)) {
        const res = await send(request)
        assert.equal(res.status, 401, `${name}: ${res.body}`)
        assert.deepEqual(stableBody(res.body), uniform401, name)
      }
      assert.equal((await send(get('/healthz', [], '1.0'))).status, 200)
    })

    it('X-Forwarded-Host and Forwarded are ignored unless SITEGRID_TRUST_PROXY is set; then the last X-Forwarded-Host names the organisation (Forwarded never does)', async (t) => {
      const direct = await cell(t, dialect)
      const { a, b } = direct
      const headers = (key: string, forwarded: string) => [`Host: ${a.org.slug}.localhost`, forwarded, `X-Api-Key: ${key}`]
      assert.equal(await direct.servedAs(get('/api/me', headers(a.key, `X-Forwarded-Host: ${b.org.slug}.localhost`))), a.org.slug)
      assert.equal(await direct.servedAs(get('/api/me', headers(b.key, `X-Forwarded-Host: ${b.org.slug}.localhost`))), 401)
      assert.equal(await direct.servedAs(get('/api/me', headers(b.key, `Forwarded: host=${b.org.slug}.localhost`))), 401)

      const proxied = await cell(t, dialect, { SITEGRID_TRUST_PROXY: 'true' })
      const [c, d] = [proxied.a, proxied.b]
      const via = (key: string, forwarded: string) => [`Host: ${c.org.slug}.localhost`, forwarded, `X-Api-Key: ${key}`]
      assert.equal(await proxied.servedAs(get('/api/me', via(d.key, `X-Forwarded-Host: ${d.org.slug}.localhost`))), d.org.slug)
      assert.equal(await proxied.servedAs(get('/api/me', via(c.key, `X-Forwarded-Host: ${d.org.slug}.localhost`))), 401)
      // The proxy appends what it saw: the last entry is the one it vouches for.
      assert.equal(await proxied.servedAs(get('/api/me', via(d.key, `X-Forwarded-Host: ${c.org.slug}.localhost, ${d.org.slug}.localhost`))), d.org.slug)
      assert.equal(await proxied.servedAs(get('/api/me', via(d.key, `Forwarded: host=${d.org.slug}.localhost`))), 401)
    })

    it("behind the trusted proxy a key's client networks judge the address the proxy saw (the last X-Forwarded-For entry), not one the client wrote before it", async (t) => {
      const { h, a, servedAs } = await cell(t, dialect, { SITEGRID_TRUST_PROXY: 'true' })
      const minted = await h.inject(
        { org: a.org, apiKey: a.key },
        {
          method: 'POST',
          url: '/api/admin/api-keys',
          payload: { name: 'plant gateway', role: 'member', expiresAt: new Date(h.clock.now() + 86_400_000).toISOString(), networks: ['10.9.0.0/16'] },
        },
      )
      assert.equal(minted.statusCode, 201, minted.body)
      const key = (minted.json() as { plaintext: string }).plaintext
      const from = (forwardedFor: string) => get('/api/me', [`Host: ${a.org.slug}.localhost`, `X-Forwarded-For: ${forwardedFor}`, `X-Api-Key: ${key}`])
      assert.equal(await servedAs(from('10.9.0.7')), a.org.slug, 'the proxy saw a client inside the network')
      assert.equal(await servedAs(from('10.9.0.7, 203.0.113.9')), 401, 'the client wrote 10.9.0.7; the proxy saw 203.0.113.9')
      assert.equal(await servedAs(from('203.0.113.9')), 401)
    })
  })
}
