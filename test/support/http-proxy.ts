// A minimal forward proxy on loopback (issue 26): what a plant's outbound proxy does for the site server's link.
// It takes absolute-form requests (`GET http://host:port/path`, plain HTTP) and `CONNECT host:port` tunnels (HTTPS),
// and counts what went through, so a test can tell that HTTP(S)_PROXY was honoured and NO_PROXY bypassed it.
// Like the proxy it stands for, it resolves the target's name itself: `localhost` and its subdomains (RFC 6761) go to
// 127.0.0.1, so `https://{slug}.localhost:{port}` reaches a cell on this machine with Host and SNI intact; `route`
// can send a target elsewhere (through a tcp-proxy, say).
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { connect, type Socket } from 'node:net'

export interface HttpProxyStats {
  /** Absolute-form requests forwarded, and CONNECT tunnels opened. */
  requests: number
  tunnels: number
  /** Requests or tunnels turned away (`deny`, `auth`, an unreachable target). */
  refused: number
  /** Bytes client → target and target → client (tunnels: everything; requests: bodies only). */
  bytesUp: number
  bytesDown: number
  /** Every target, `host:port`, in arrival order. */
  targets: string[]
}

export interface HttpProxy {
  readonly port: number
  /** `http://127.0.0.1:{port}`, for HTTP_PROXY / HTTPS_PROXY. */
  readonly url: string
  stats(): HttpProxyStats
  close(): Promise<void>
}

export interface HttpProxyOptions {
  /** Where a target really is; the default sends `*.localhost` to 127.0.0.1 and everything else where it names. */
  route?: (host: string, port: number) => { host: string; port: number }
  /** Targets (`host:port`) to refuse with 403, as a proxy's allow-list would. */
  deny?: (target: string) => boolean
  /** Require `Proxy-Authorization: Basic user:password` (407 otherwise). */
  auth?: { user: string; password: string }
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']

const defaultRoute = (host: string, port: number) => ({ host: /(^|\.)localhost\.?$/i.test(host) ? '127.0.0.1' : host, port })

export async function startHttpProxy(options: HttpProxyOptions = {}): Promise<HttpProxy> {
  const route = options.route ?? defaultRoute
  const stats: HttpProxyStats = { requests: 0, tunnels: 0, refused: 0, bytesUp: 0, bytesDown: 0, targets: [] }
  const sockets = new Set<Socket>()
  const expected = options.auth ? `Basic ${Buffer.from(`${options.auth.user}:${options.auth.password}`).toString('base64')}` : undefined

  /** The status to refuse with, or undefined to let the target through. */
  const gate = (target: string, headers: IncomingHttpHeaders): number | undefined => {
    stats.targets.push(target)
    if (expected !== undefined && headers['proxy-authorization'] !== expected) return 407
    if (options.deny?.(target)) return 403
    return undefined
  }

  const server = createServer((req, res) => {
    let url: URL
    try {
      url = new URL(req.url ?? '')
    } catch {
      // Origin-form: this is a proxy, not a server.
      stats.refused++
      res.writeHead(400).end('absolute-form only')
      return
    }
    const port = Number(url.port) || 80
    const refusal = gate(`${url.hostname}:${port}`, req.headers)
    if (refusal) {
      stats.refused++
      res.writeHead(refusal, refusal === 407 ? { 'proxy-authenticate': 'Basic realm="test"' } : {}).end()
      return
    }
    stats.requests++
    const to = route(url.hostname, port)
    const headers = { ...req.headers }
    for (const h of HOP_BY_HOP) delete headers[h]
    // RFC 9112 §3.2.2: the absolute-form target's authority replaces whatever Host the client sent.
    headers.host = url.host
    const upstream = httpRequest(
      { host: to.host, port: to.port, method: req.method, path: `${url.pathname}${url.search}`, headers, agent: false },
      (answer) => {
        const out = { ...answer.headers }
        for (const h of HOP_BY_HOP) delete out[h]
        res.writeHead(answer.statusCode ?? 502, out)
        answer.on('data', (chunk: Buffer) => {
          stats.bytesDown += chunk.length
        })
        answer.pipe(res)
      },
    )
    upstream.on('error', () => {
      stats.refused++
      if (!res.headersSent) res.writeHead(502).end()
      else res.destroy()
    })
    req.on('data', (chunk: Buffer) => {
      stats.bytesUp += chunk.length
    })
    req.pipe(upstream)
  })

  server.on('connect', (req, client: Socket, head: Buffer) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => client.destroy())
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(req.url ?? '')
    if (!match) {
      stats.refused++
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n')
      return
    }
    const [, host = '', portText = ''] = match
    const refusal = gate(`${host}:${portText}`, req.headers)
    if (refusal) {
      stats.refused++
      client.end(`HTTP/1.1 ${refusal} ${refusal === 407 ? 'Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"' : 'Forbidden'}\r\n\r\n`)
      return
    }
    const to = route(host.replace(/^\[|\]$/g, ''), Number(portText))
    const upstream = connect(to.port, to.host)
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    let connected = false
    upstream.on('error', () => {
      if (connected) return
      stats.refused++
      client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n')
    })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => {
      if (connected) client.destroy()
    })
    upstream.once('connect', () => {
      connected = true
      stats.tunnels++
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length > 0) {
        stats.bytesUp += head.length
        upstream.write(head)
      }
      client.on('data', (chunk: Buffer) => {
        stats.bytesUp += chunk.length
      })
      upstream.on('data', (chunk: Buffer) => {
        stats.bytesDown += chunk.length
      })
      client.pipe(upstream)
      upstream.pipe(client)
    })
  })
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    stats: () => ({ ...stats, targets: [...stats.targets] }),
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
