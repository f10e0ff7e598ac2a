// An upload refused before its body arrived whole (its first part is wrong) must not leave its kept-alive connection
// stuck: the parser stopped reading the body, so the unread rest held the connection's next request unanswered. The
// console's historian page met it (a refused mapping, corrected, imported again on the same connection: no answer).
// Real sockets, as a browser sends: the whole request written at once, the next one on the same connection.
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { describe, it } from 'node:test'
import { multipart, plant } from '../../src/modules/historian/test-setup.ts'
import { electricalSetup } from '../../src/modules/electrical/test-support.ts'
import { harness, testDialects, type Harness } from '../harness.ts'

interface Answer {
  status: number
  headers: Record<string, string>
  body: string
}

/**
 * Writes `first` and, once its answer is read, `next` on one connection. The first answer, and the second's if the
 * connection stayed open, or `closed` when the server ended it (a client then opens another, as browsers do).
 */
async function twoOnOneConnection(h: Harness, first: Buffer, next: Buffer): Promise<{ first: Answer; second: Answer | 'closed' }> {
  await h.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = h.app.server.address() as { port: number }
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {}) // a reset after the server closed: the outcome is read from what arrived
  let received = Buffer.alloc(0)
  let ended = false
  const waiters: Array<() => void> = []
  const wake = () => {
    for (const w of waiters.splice(0)) w()
  }
  socket.on('data', (d: Buffer) => {
    received = Buffer.concat([received, d])
    wake()
  })
  socket.on('close', () => {
    ended = true
    wake()
  })
  /** The next whole answer (content-length framed), or undefined when the connection ended first or in 10 s. */
  const answer = async (): Promise<Answer | undefined> => {
    const deadline = Date.now() + 10_000
    for (;;) {
      const head = received.indexOf('\r\n\r\n')
      if (head >= 0) {
        const lines = received.subarray(0, head).toString('latin1').split('\r\n')
        const headers = Object.fromEntries(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
        const length = Number(headers['content-length'] ?? 0)
        if (received.length >= head + 4 + length) {
          const body = received.subarray(head + 4, head + 4 + length).toString()
          received = received.subarray(head + 4 + length)
          return { status: Number(lines[0]!.split(' ')[1]), headers, body }
        }
      }
      if (ended || Date.now() > deadline) return undefined
      await new Promise<void>((resolve) => {
        waiters.push(resolve)
        setTimeout(resolve, 100)
      })
    }
  }
  try {
    await new Promise<void>((resolve) => socket.once('connect', resolve))
    socket.write(first)
    const one = await answer()
    assert.ok(one, 'the refused upload is answered')
    if (!socket.destroyed) socket.write(next)
    const two = await answer()
    if (two === undefined) assert.ok(ended, 'the next request on an open connection is answered, not left waiting')
    return { first: one, second: two ?? 'closed' }
  } finally {
    socket.destroy()
  }
}

const raw = (head: string, headers: Record<string, string>, body: Buffer) =>
  Buffer.concat([
    Buffer.from(
      `${head}\r\n${Object.entries({ ...headers, 'content-length': String(body.length) })
        .map(([k, v]) => `${k}: ${v}`)
        .join('\r\n')}\r\n\r\n`,
    ),
    body,
  ])

for (const dialect of testDialects()) {
  describe(`${dialect}: an upload refused before its body arrived closes its connection; the next request is answered`, () => {
    it('historian import refused by its mapping (the part before the 4 MiB trend file), then a list on the same connection', async (t) => {
      const h = await harness(t, dialect)
      const p = await plant(h)
      const host = `${p.owner.org.slug}.localhost`
      const trend = Buffer.from(`timestamp,tag,value\r\n${'2026-01-01T00:00:00Z,ins_pump.flow,1.5\r\n'.repeat(110_000)}`)
      const form = multipart([
        { name: 'site_id', value: p.siteCode },
        { name: 'format', value: 'long' },
        { name: 'mapping_csv', filename: 'm.csv', content: 'historian_tag,instance_id,tag_key\r\nins_pump.flow,ins_pump,\r\n' },
        { name: 'trend_csv', filename: 't.csv', content: trend },
      ])
      const upload = raw('POST /api/historian/import-batches HTTP/1.1', { host, 'x-api-key': p.owner.apiKey ?? '', ...form.headers }, form.payload)
      const list = raw(`GET /api/historian/import-batches?siteId=${p.siteCode} HTTP/1.1`, { host, 'x-api-key': p.owner.apiKey ?? '' }, Buffer.alloc(0))
      const { first, second } = await twoOnOneConnection(h, upload, list)
      assert.equal(first.status, 422, first.body)
      assert.match(first.body, /tag_key/)
      assert.equal(first.headers.connection, 'close', 'the refusal says the connection ends')
      assert.equal(second, 'closed', 'and it ends: the next request goes on a new connection')
      // Nothing of the refused upload was kept.
      const after = await h.inject(p.owner, { method: 'GET', url: `/api/historian/import-batches?siteId=${p.siteCode}` })
      assert.deepEqual((after.json() as { items: unknown[] }).items, [])
    })

    it('a streamed network load refused at its first node, then a read: answered on the same connection or a closed one', async (t) => {
      const { h, org, key } = await electricalSetup(t, dialect)
      const host = `${org.slug}.localhost`
      const nodes = Array.from({ length: 40_000 }, (_, i) => ({ id: `N${i}`, name: `Node ${i}`, nodeType: 3 }))
      const body = Buffer.from(JSON.stringify({ nodes: [{ id: 'BAD', name: 'wrong type', nodeType: 99 }, ...nodes], edges: [] }))
      const load = raw('PUT /api/sites/S1/electrical/network HTTP/1.1', { host, 'x-api-key': key, 'content-type': 'application/json' }, body)
      const read = raw('GET /api/sites/S1/electrical/nodes HTTP/1.1', { host, 'x-api-key': key }, Buffer.alloc(0))
      const { first, second } = await twoOnOneConnection(h, load, read)
      assert.equal(first.status, 400, first.body)
      assert.match(first.body, /\/nodes\/0\/nodeType/)
      // Whether the whole body had arrived by the refusal depends on the socket's timing: either way nothing waits.
      if (second === 'closed') assert.equal(first.headers.connection, 'close', 'a connection the server ends says so')
      else assert.equal(second.status, 200, 'answered on the same connection')
    })

    it('a request whose body was read whole keeps its connection: a refused JSON body, then a read', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('admin')
      const host = `${org.slug}.localhost`
      const refused = raw('POST /api/sites HTTP/1.1', { host, 'x-api-key': key, 'content-type': 'application/json' }, Buffer.from('{"code":""}'))
      const read = raw('GET /api/sites HTTP/1.1', { host, 'x-api-key': key }, Buffer.alloc(0))
      const { first, second } = await twoOnOneConnection(h, refused, read)
      assert.equal(first.status, 400, first.body)
      assert.notEqual(first.headers.connection, 'close')
      assert.ok(second !== 'closed' && second.status === 200, 'answered on the same connection')
    })

    it('a request without a body refused by the auth hook keeps its connection: a remembered unknown key, then a read', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('admin')
      const host = `${org.slug}.localhost`
      const unknown = raw('GET /api/sites HTTP/1.1', { host, 'x-api-key': `${key.slice(0, -4)}zzzz` }, Buffer.alloc(0))
      const read = raw('GET /api/sites HTTP/1.1', { host, 'x-api-key': key }, Buffer.alloc(0))
      // Refused once, the key is remembered: the next refusal is answered synchronously in the hook (issue 29).
      assert.equal((await h.app.inject({ method: 'GET', url: '/api/sites', headers: { host, 'x-api-key': `${key.slice(0, -4)}zzzz` } })).statusCode, 401)
      const { first, second } = await twoOnOneConnection(h, unknown, read)
      assert.equal(first.status, 401, first.body)
      assert.notEqual(first.headers.connection, 'close', 'a refusal of a request without a body does not end its connection')
      assert.ok(second !== 'closed' && second.status === 200, 'answered on the same connection')
    })
  })
}
