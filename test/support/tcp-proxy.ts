// A loopback TCP proxy for dependency-fault tests (issue 14): put it between the service and PostgreSQL and switch
// its mode while requests run.
//   pass      forwards both ways
//   latency   forwards both ways, each chunk `latencyMs` late (order kept)
//   reset     resets every open connection at once, and every new one on arrival
//   blackhole accepts new connections and never forwards them; open connections go silent (their bytes are dropped)
// Leaving `blackhole` destroys the connections that lost bytes: their protocol streams cannot resume.
import { createServer, connect, type Socket } from 'node:net'

export type ProxyMode = 'pass' | 'latency' | 'reset' | 'blackhole'

export interface TcpProxy {
  readonly port: number
  readonly mode: ProxyMode
  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string
  setMode(mode: ProxyMode, options?: { latencyMs?: number }): void
  /** Connections accepted so far, and how many were reset or blackholed. */
  stats(): { accepted: number; reset: number; blackholed: number; open: number }
  close(): Promise<void>
}

interface Pair {
  client: Socket
  upstream: Socket | undefined
  silenced: boolean
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'pass'
  let latencyMs = 0
  const pairs = new Set<Pair>()
  const stats = { accepted: 0, reset: 0, blackholed: 0 }

  const destroy = (pair: Pair, reset: boolean) => {
    pairs.delete(pair)
    if (reset) {
      pair.client.resetAndDestroy()
      pair.upstream?.resetAndDestroy()
    } else {
      pair.client.destroy()
      pair.upstream?.destroy()
    }
  }

  // Each direction keeps its own queue so that latency never reorders bytes.
  const forwarder = (pair: Pair, to: () => Socket | undefined) => {
    let queue = Promise.resolve()
    return (chunk: Buffer) => {
      if (mode === 'blackhole' || pair.silenced) {
        pair.silenced = true
        return
      }
      const delay = mode === 'latency' ? latencyMs : 0
      queue = queue.then(
        () =>
          new Promise<void>((resolve) => {
            const send = () => {
              const socket = to()
              if (socket && !socket.destroyed && !pair.silenced) socket.write(chunk)
              resolve()
            }
            if (delay > 0) setTimeout(send, delay)
            else send()
          }),
      )
    }
  }

  const server = createServer((client) => {
    stats.accepted++
    const pair: Pair = { client, upstream: undefined, silenced: false }
    pairs.add(pair)
    client.on('error', () => destroy(pair, false))
    client.on('close', () => destroy(pair, false))
    if (mode === 'reset') {
      stats.reset++
      destroy(pair, true)
      return
    }
    if (mode === 'blackhole') {
      stats.blackholed++
      pair.silenced = true
      client.on('data', () => {})
      return
    }
    const upstream = connect(target.port, target.host)
    pair.upstream = upstream
    upstream.on('error', () => destroy(pair, false))
    upstream.on('close', () => destroy(pair, false))
    client.on(
      'data',
      forwarder(pair, () => pair.upstream),
    )
    upstream.on(
      'data',
      forwarder(pair, () => pair.client),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port

  return {
    port,
    get mode() {
      return mode
    },
    rewrite(url) {
      const u = new URL(url)
      u.hostname = '127.0.0.1'
      u.port = String(port)
      return u.toString()
    },
    setMode(next, options = {}) {
      const previous = mode
      mode = next
      latencyMs = options.latencyMs ?? latencyMs
      if (next === 'reset') {
        for (const pair of [...pairs]) {
          stats.reset++
          destroy(pair, true)
        }
      }
      if (next === 'blackhole') stats.blackholed += pairs.size
      if (previous === 'blackhole' && next !== 'blackhole') {
        for (const pair of [...pairs]) if (pair.silenced || !pair.upstream) destroy(pair, false)
      }
    },
    stats: () => ({ ...stats, open: pairs.size }),
    close: async () => {
      for (const pair of [...pairs]) destroy(pair, false)
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
