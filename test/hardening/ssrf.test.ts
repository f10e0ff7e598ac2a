import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, describe, it } from 'node:test'
import { isForbiddenAddress, createAllowList } from '../../src/http/outbound-address.ts'
import { createGuardedFetch, OutboundAddressRefused, type ResolvedAddress } from '../../src/http/outbound-fetch.ts'
import { AiProviderError } from '../../src/modules/ai/errors.ts'
import { createOpenAiProvider } from '../../src/modules/ai/provider.ts'
import { startFakeOpenAi } from '../support/fake-openai.ts'

// Every attempt the guard refuses, over the whole file: the figure the suite prints.
let refused = 0
const counted = {
  onRefused: () => {
    refused += 1
  },
}
after(() => console.log(`ssrf: ${refused} outbound attempts refused by the guard`))

/** A loopback HTTP server that counts what reaches it; `Connection: close` so that every request connects anew. */
async function server(
  host: string,
  handler: (path: string) => { status: number; headers?: Record<string, string>; body?: string } = () => ({ status: 200, body: 'ok' }),
) {
  const hits: string[] = []
  const srv: Server = createServer((req, res) => {
    hits.push(req.url ?? '')
    const answer = handler(req.url ?? '')
    res.writeHead(answer.status, { connection: 'close', ...answer.headers }).end(answer.body ?? '')
  })
  await new Promise<void>((resolve) => srv.listen(0, host, resolve))
  after(() => new Promise<void>((resolve) => srv.close(() => resolve())))
  return { hits, port: (srv.address() as AddressInfo).port }
}

const REQUEST = { model: 'm', messages: [{ role: 'user' as const, content: 'hello' }], maxTokens: 8 }

describe('SSRF: outbound calls refuse internal addresses unless the configuration allows them', () => {
  it('literal addresses in every spelling WHATWG URL accepts are refused before any connection', async () => {
    const internal = await server('127.0.0.1')
    const p = internal.port
    const urls = [
      `http://127.0.0.1:${p}/`,
      `http://127.1:${p}/`,
      `http://0x7f.1:${p}/`,
      `http://0177.0.0.1:${p}/`,
      `http://2130706433:${p}/`,
      `http://[::1]:${p}/`,
      `http://[::ffff:127.0.0.1]:${p}/`,
      `http://[::ffff:7f00:1]:${p}/`,
      `http://[::127.0.0.1]:${p}/`,
      `http://[64:ff9b::7f00:1]:${p}/`,
      `http://[2002:7f00:1::1]:${p}/`,
      `http://0.0.0.0:${p}/`,
      `http://[::]:${p}/`,
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
      'http://10.0.0.1/',
      'http://172.16.5.4/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://224.0.0.1/',
      'http://255.255.255.255/',
      'http://[fe80::1]/',
      'http://[fc00::1]/',
      'http://[ff02::1]/',
      `http://localhost:${p}/`,
      `http://api.localhost:${p}/`,
      'http://metadata.google.internal/computeMetadata/v1/',
    ]
    const guarded = createGuardedFetch({ ...counted, resolve: async () => assert.fail('a literal or reserved name is never resolved') })
    for (const url of urls) {
      await assert.rejects(guarded(url), OutboundAddressRefused, url)
    }
    assert.equal(internal.hits.length, 0)
  })

  it('the address classes: public addresses pass, every internal class and embedded IPv4 form is refused', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2001:4860:4860::8888'])
      assert.equal(isForbiddenAddress(address), false, address)
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.127.0.1',
      '0.0.0.0',
      '239.1.1.1',
      '::1',
      '::',
      'fd00:ec2::254',
      'fe80::1%eth0',
      '::ffff:10.0.0.1',
      '::ffff:a00:1',
      '64:ff9b::a9fe:a9fe',
      '2002:a9fe:a9fe::',
      'not-an-ip',
    ]) {
      assert.equal(isForbiddenAddress(address), true, address)
    }
  })

  it('a name is resolved once and EVERY answer is judged: one internal answer among public ones refuses the call', async () => {
    let lookups = 0
    const answers: Record<string, ResolvedAddress[]> = {
      'ai.example.test': [{ address: '127.0.0.1', family: 4 }],
      'mixed.example.test': [
        { address: '8.8.8.8', family: 4 },
        { address: '169.254.169.254', family: 4 },
      ],
      'v6.example.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
      'meta6.example.test': [{ address: 'fd00:ec2::254', family: 6 }],
    }
    const guarded = createGuardedFetch({
      ...counted,
      resolve: async (host) => {
        lookups += 1
        return answers[host] ?? []
      },
    })
    for (const host of Object.keys(answers)) {
      await assert.rejects(guarded(`http://${host}/v1/chat/completions`, { method: 'POST', body: '{}' }), OutboundAddressRefused, host)
    }
    assert.equal(lookups, Object.keys(answers).length)
  })

  it('DNS rebinding: the address judged is the address connected to; a changed answer on the next call is refused', async () => {
    const allowed = await server('127.0.0.2')
    const internal = await server('127.0.0.1')
    assert.equal(allowed.port === internal.port, false)
    let lookups = 0
    // First answer: the allow-listed 127.0.0.2. Every later answer: loopback 127.0.0.1 (the attacker's rebinding).
    const resolve = async () => {
      lookups += 1
      return [{ address: lookups === 1 ? '127.0.0.2' : '127.0.0.1', family: 4 }]
    }
    const guarded = createGuardedFetch({ ...counted, resolve, isAllowed: createAllowList(['127.0.0.2/32']) })
    const first = await guarded(`http://rebind.example.test:${allowed.port}/one`)
    assert.equal(first.status, 200)
    assert.equal(await first.text(), 'ok')
    assert.equal(lookups, 1, 'one resolution per connection: the check and the connect use the same answer')
    assert.deepEqual(allowed.hits, ['/one'])
    await assert.rejects(guarded(`http://rebind.example.test:${allowed.port}/two`), OutboundAddressRefused)
    await assert.rejects(guarded(`http://rebind.example.test:${internal.port}/three`), OutboundAddressRefused)
    assert.deepEqual(allowed.hits, ['/one'])
    assert.equal(internal.hits.length, 0, 'nothing ever reached the internal server')
  })

  it('a redirect from an allowed server to a loopback address is never followed', async () => {
    const internal = await server('127.0.0.1')
    const redirector = await server('127.0.0.2', () => ({ status: 302, headers: { location: `http://127.0.0.1:${internal.port}/secret` } }))
    const guarded = createGuardedFetch({ ...counted, isAllowed: createAllowList(['127.0.0.2']) })
    await assert.rejects(guarded(`http://127.0.0.2:${redirector.port}/`), TypeError, 'following is refused')
    const manual = await guarded(`http://127.0.0.2:${redirector.port}/`, { redirect: 'manual' })
    assert.equal(manual.status, 302, 'manual: the 3xx is handed back, not followed')
    assert.equal(internal.hits.length, 0)

    // The AI provider asks for `redirect: manual` and treats the 3xx as a failure (502), not as a hop to follow.
    const provider = createOpenAiProvider(
      { name: 'hop', baseUrl: `http://127.0.0.2:${redirector.port}/v1`, apiKey: undefined, timeoutMs: 5_000, maxRetries: 0, trusted: true },
      { fetch: guarded },
    )
    await assert.rejects(provider.complete(REQUEST), AiProviderError)
    assert.equal(internal.hits.length, 0)
  })

  it('the AI provider: a name resolving to loopback is a 502 AiProviderError, not retried; the explicit allowance lets the loopback fake through', async (t) => {
    const fake = await startFakeOpenAi()
    t.after(() => fake.close())
    const port = new URL(fake.baseUrl).port
    const config = { name: 'box', baseUrl: `http://plant-ai.example.test:${port}/v1`, apiKey: undefined, timeoutMs: 5_000, maxRetries: 3, trusted: true }
    const resolve = async () => [{ address: '127.0.0.1', family: 4 }]
    const refusing = createOpenAiProvider(config, { fetch: createGuardedFetch({ ...counted, resolve }) })
    await assert.rejects(refusing.complete(REQUEST), AiProviderError)
    assert.equal(fake.requests.length, 0, 'refused before connecting, and not retried')

    const allowing = createOpenAiProvider(config, { fetch: createGuardedFetch({ resolve, allowPrivateNetwork: true }) })
    const answer = await allowing.complete(REQUEST)
    assert.equal(answer.text, 'fake answer')
    const literal = createOpenAiProvider({ ...config, baseUrl: fake.baseUrl }, { fetch: createGuardedFetch({ allowPrivateNetwork: true }) })
    assert.equal((await literal.complete(REQUEST)).text, 'fake answer')
    assert.equal(fake.requests.length, 2)
  })

  it('a streamed answer passes through the guard unchanged (the body streams)', async (t) => {
    const fake = await startFakeOpenAi()
    t.after(() => fake.close())
    fake.enqueue({ kind: 'ok', chunks: ['one ', 'two'] })
    const provider = createOpenAiProvider(
      { name: 'box', baseUrl: fake.baseUrl, apiKey: undefined, timeoutMs: 5_000, maxRetries: 0, trusted: true },
      { fetch: createGuardedFetch({ allowPrivateNetwork: true }) },
    )
    const deltas: string[] = []
    for await (const event of provider.stream(REQUEST)) if (event.type === 'delta') deltas.push(event.text)
    assert.deepEqual(deltas, ['one ', 'two'])
  })
})
