// The fault proxy the fleet link's tests stand between a site server and its cloud (issue 26): bytes pass both ways
// and are counted, cut() breaks open connections and refuses new ones until heal(), setDelay() holds each chunk back
// without reordering, and corruptNext() flips exactly the bytes asked for, in the direction asked for.
// No database is involved: these run once, not per dialect.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import { startTcpProxy } from './tcp-proxy.ts'

/** An echo server that also keeps every byte it received. */
async function echoServer(t: TestContext): Promise<{ port: number; received: () => Buffer }> {
  const chunks: Buffer[] = []
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    socket.on('data', (chunk) => {
      chunks.push(chunk)
      socket.write(chunk)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(async () => {
    for (const s of sockets) s.destroy()
    await new Promise((resolve) => server.close(resolve))
  })
  return { port: (server.address() as { port: number }).port, received: () => Buffer.concat(chunks) }
}

/** A connected client that gathers what it reads; `until(n)` resolves once n bytes came. */
async function client(port: number) {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  const chunks: Buffer[] = []
  let waiters: Array<() => void> = []
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk)
    for (const w of waiters) w()
  })
  // Not events.once: it rejects on 'error', and a reset connection emits ECONNRESET before closing.
  const closed = new Promise<Buffer>((resolve) => socket.on('close', () => resolve(Buffer.concat(chunks))))
  await once(socket, 'connect')
  return {
    socket,
    closed,
    read: () => Buffer.concat(chunks),
    until: (n: number) =>
      new Promise<Buffer>((resolve, reject) => {
        const check = () => {
          const got = Buffer.concat(chunks)
          if (got.length >= n) resolve(got)
        }
        waiters.push(check)
        socket.once('close', () => reject(new Error(`closed after ${Buffer.concat(chunks).length} of ${n} bytes`)))
        check()
      }).finally(() => {
        waiters = []
      }),
  }
}

describe('tcp proxy (test support for the fleet link)', () => {
  it('forwards bytes both ways unchanged and counts them and the connections', async (t) => {
    const echo = await echoServer(t)
    const proxy = await startTcpProxy(echo.port)
    t.after(() => proxy.close())
    const c = await client(proxy.port)
    const payload = Buffer.from('hello through the proxy')
    c.socket.write(payload)
    assert.deepEqual(await c.until(payload.length), payload)
    assert.deepEqual(echo.received(), payload)
    const stats = proxy.stats()
    assert.equal(stats.accepted, 1)
    assert.equal(stats.open, 1)
    assert.equal(stats.bytesUp, payload.length)
    assert.equal(stats.bytesDown, payload.length)
    assert.equal(stats.corruptedUp + stats.corruptedDown, 0)
    c.socket.destroy()
  })

  it('cut() closes open connections and resets new ones; heal() lets new ones through again', async (t) => {
    const echo = await echoServer(t)
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: echo.port })
    t.after(() => proxy.close())
    const open = await client(proxy.port)
    open.socket.write('a')
    await open.until(1)

    proxy.cut()
    await open.closed
    assert.equal(proxy.mode, 'reset')
    const refused = connect(proxy.port, '127.0.0.1')
    const outcome = await new Promise<string>((resolve) => {
      refused.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'))
      refused.on('close', () => resolve('closed'))
      refused.on('connect', () => refused.write('b'))
    })
    assert.ok(['ECONNRESET', 'closed', 'EPIPE'].includes(outcome), outcome)
    assert.equal(echo.received().toString(), 'a', 'nothing reached the target during the cut')

    proxy.heal()
    assert.equal(proxy.mode, 'pass')
    const after = await client(proxy.port)
    after.socket.write('c')
    assert.equal((await after.until(1)).toString(), 'c')
    const stats = proxy.stats()
    assert.equal(stats.accepted, 3)
    assert.equal(stats.reset, 2, 'the open connection and the one that arrived during the cut')
    after.socket.destroy()
  })

  it('setDelay() holds each chunk back at least that long, keeps the order, and 0 removes it', async (t) => {
    const echo = await echoServer(t)
    const proxy = await startTcpProxy(echo.port)
    t.after(() => proxy.close())
    proxy.setDelay(300)
    assert.equal(proxy.mode, 'latency')
    const c = await client(proxy.port)
    const started = performance.now()
    const parts = ['one,', 'two,', 'three,', 'four']
    for (const p of parts) c.socket.write(p)
    const got = await c.until(parts.join('').length)
    // A lower bound only (the proxy waits the delay up and again down before the echo returns): never a ceiling.
    assert.ok(performance.now() - started >= 2 * 300 - 5, 'the round trip waited the delay each way')
    assert.equal(got.toString(), parts.join(''))
    proxy.setDelay(0)
    assert.equal(proxy.mode, 'pass')
    c.socket.destroy()
  })

  it("corruptNext(n, 'up', { skip }) flips exactly n bytes going to the target, after skip, then stops", async (t) => {
    const echo = await echoServer(t)
    const proxy = await startTcpProxy(echo.port)
    t.after(() => proxy.close())
    const c = await client(proxy.port)
    const sent = Buffer.from('0123456789')
    proxy.corruptNext(3, 'up', { skip: 2 })
    c.socket.write(sent)
    const got = await c.until(sent.length)
    const expected = Buffer.from(sent)
    for (const i of [2, 3, 4]) expected[i] = (expected[i] as number) ^ 1
    assert.deepEqual(echo.received(), expected, 'the target saw the flipped bytes')
    assert.deepEqual(got, expected, 'and echoed them back as they came')
    c.socket.write('abc')
    assert.equal((await c.until(sent.length + 3)).subarray(sent.length).toString(), 'abc', 'later bytes pass intact')
    assert.equal(proxy.stats().corruptedUp, 3)
    assert.equal(proxy.stats().corruptedDown, 0)
    c.socket.destroy()
  })

  it("corruptNext(n, 'down') corrupts only what comes back: the target received the bytes intact", async (t) => {
    const echo = await echoServer(t)
    const proxy = await startTcpProxy(echo.port)
    t.after(() => proxy.close())
    const c = await client(proxy.port)
    const sent = Buffer.from('abcdef')
    proxy.corruptNext(2, 'down')
    c.socket.write(sent)
    const got = await c.until(sent.length)
    assert.deepEqual(echo.received(), sent)
    assert.notDeepEqual(got, sent)
    assert.equal(got.subarray(2).toString(), 'cdef')
    assert.equal(got[0], 'a'.charCodeAt(0) ^ 1)
    assert.equal(proxy.stats().corruptedDown, 2)
    c.socket.destroy()
  })

  it("the issue-14 modes still work: a connection accepted during setMode('blackhole') is silenced, and destroyed on 'pass'", async (t) => {
    const echo = await echoServer(t)
    const proxy = await startTcpProxy(echo.port)
    t.after(() => proxy.close())
    proxy.setMode('blackhole')
    const silent = await client(proxy.port)
    while (proxy.stats().accepted < 1) await new Promise((resolve) => setImmediate(resolve))
    silent.socket.write('lost')
    proxy.setMode('pass')
    await silent.closed
    assert.equal(echo.received().length, 0)
    assert.equal(proxy.stats().blackholed, 1)
  })
})
