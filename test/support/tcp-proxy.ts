// A loopback TCP proxy for fault tests: put it between a client and a server and break the wire while requests run.
// Issue 14 put it in front of PostgreSQL (modes); issue 26 puts it in front of the cloud cell on the fleet link
// (cut/heal, delay, corruption). The faults compose: a delayed link can be corrupted, and cut.
//   pass       forwards both ways
//   latency    forwards both ways, each chunk `latencyMs` late (order kept) — `setDelay(ms)`
//   reset      resets every open connection at once, and every new one on arrival — `cut()`, until `heal()`
//   blackhole  accepts new connections and never forwards them; open connections go silent (their bytes are dropped)
// Leaving `blackhole` destroys the connections that lost bytes: their protocol streams cannot resume.
// `corruptNext(n, 'up' | 'down')` flips the lowest bit of each of the next n bytes going that way (up: client to
// target), after skipping `skip` bytes: single-bit errors that TCP's checksum would not have let through, which only
// a digest (or TLS) above can notice.
import { createServer, connect, type Socket } from 'node:net'

export type ProxyMode = 'pass' | 'latency' | 'reset' | 'blackhole'
export type Direction = 'up' | 'down'

export interface TcpProxyStats {
  /** Connections accepted so far, and how many were reset or blackholed; `open` now. */
  accepted: number
  reset: number
  blackholed: number
  open: number
  /** Bytes forwarded client → target (`up`) and target → client (`down`). */
  bytesUp: number
  bytesDown: number
  /** Bytes flipped so far by `corruptNext`, each way. */
  corruptedUp: number
  corruptedDown: number
}

export interface TcpProxy {
  readonly port: number
  readonly mode: ProxyMode
  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string
  setMode(mode: ProxyMode, options?: { latencyMs?: number }): void
  /** Destroys every open connection and resets new ones until `heal()`. */
  cut(): void
  /** Undoes `cut()` and a blackhole; the delay and pending corruption stay. */
  heal(): void
  /** Each chunk forwarded `ms` late, order kept; 0 removes the delay. */
  setDelay(ms: number): void
  /** Flips one bit in each of the next `byteCount` bytes going `direction`, after letting `skip` bytes pass intact. */
  corruptNext(byteCount: number, direction: Direction, options?: { skip?: number }): void
  stats(): TcpProxyStats
  close(): Promise<void>
}

interface Pair {
  client: Socket
  upstream: Socket | undefined
  silenced: boolean
}

export async function startTcpProxy(target: number | { host: string; port: number }): Promise<TcpProxy> {
  const { host, port: targetPort } = typeof target === 'number' ? { host: '127.0.0.1', port: target } : target
  let isCut = false
  let isBlackhole = false
  let delayMs = 0
  let latencyMs = 0 // setMode('latency') without options reuses the last one
  const corrupt: Record<Direction, { skip: number; count: number }> = { up: { skip: 0, count: 0 }, down: { skip: 0, count: 0 } }
  const pairs = new Set<Pair>()
  const stats = { accepted: 0, reset: 0, blackholed: 0, bytesUp: 0, bytesDown: 0, corruptedUp: 0, corruptedDown: 0 }

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

  const cutAll = () => {
    for (const pair of [...pairs]) {
      stats.reset++
      destroy(pair, true)
    }
  }

  /** The chunk as it leaves, with the pending corruption of its direction applied (on a copy). */
  const mangle = (chunk: Buffer, direction: Direction): Buffer => {
    const pending = corrupt[direction]
    if (pending.count === 0) return chunk
    const out = Buffer.from(chunk)
    let i = Math.min(pending.skip, out.length)
    pending.skip -= i
    for (; i < out.length && pending.count > 0; i++, pending.count--) {
      out[i] = (out[i] as number) ^ 0x01
      if (direction === 'up') stats.corruptedUp++
      else stats.corruptedDown++
    }
    return out
  }

  // Each direction keeps its own queue so that latency never reorders bytes.
  const forwarder = (pair: Pair, direction: Direction, to: () => Socket | undefined) => {
    let queue = Promise.resolve()
    return (chunk: Buffer) => {
      if (isBlackhole || pair.silenced) {
        pair.silenced = true
        return
      }
      const delay = delayMs
      queue = queue.then(
        () =>
          new Promise<void>((resolve) => {
            const send = () => {
              const socket = to()
              if (socket && !socket.destroyed && !pair.silenced) {
                const out = mangle(chunk, direction)
                if (direction === 'up') stats.bytesUp += out.length
                else stats.bytesDown += out.length
                socket.write(out)
              }
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
    if (isCut) {
      stats.reset++
      destroy(pair, true)
      return
    }
    if (isBlackhole) {
      stats.blackholed++
      pair.silenced = true
      client.on('data', () => {})
      return
    }
    const upstream = connect(targetPort, host)
    pair.upstream = upstream
    upstream.on('error', () => destroy(pair, false))
    upstream.on('close', () => destroy(pair, false))
    client.on(
      'data',
      forwarder(pair, 'up', () => pair.upstream),
    )
    upstream.on(
      'data',
      forwarder(pair, 'down', () => pair.client),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port

  const leaveBlackhole = () => {
    if (!isBlackhole) return
    isBlackhole = false
    for (const pair of [...pairs]) if (pair.silenced || !pair.upstream) destroy(pair, false)
  }

  return {
    port,
    get mode(): ProxyMode {
      if (isCut) return 'reset'
      if (isBlackhole) return 'blackhole'
      return delayMs > 0 ? 'latency' : 'pass'
    },
    rewrite(url) {
      const u = new URL(url)
      u.hostname = '127.0.0.1'
      u.port = String(port)
      return u.toString()
    },
    setMode(next, options = {}) {
      if (next !== 'blackhole') leaveBlackhole()
      isCut = next === 'reset'
      latencyMs = options.latencyMs ?? latencyMs
      delayMs = next === 'latency' ? latencyMs : 0
      if (next === 'reset') cutAll()
      if (next === 'blackhole' && !isBlackhole) {
        isBlackhole = true
        stats.blackholed += pairs.size
      }
    },
    cut() {
      isCut = true
      cutAll()
    },
    heal() {
      isCut = false
      leaveBlackhole()
    },
    setDelay(ms) {
      if (!(ms >= 0)) throw new TypeError('delay must be ≥ 0')
      delayMs = ms
    },
    corruptNext(byteCount, direction, options = {}) {
      if (!(byteCount >= 0) || !((options.skip ?? 0) >= 0)) throw new TypeError('byteCount and skip must be ≥ 0')
      corrupt[direction] = { skip: options.skip ?? 0, count: byteCount }
    },
    stats: () => ({ ...stats, open: pairs.size }),
    close: async () => {
      for (const pair of [...pairs]) destroy(pair, false)
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
