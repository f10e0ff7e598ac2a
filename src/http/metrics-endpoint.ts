import { createHash, timingSafeEqual } from 'node:crypto'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Metrics } from './metrics.ts'

/**
 * Where GET /metrics is served (docs/metrics.md): a listener of its own, on loopback by default
 * (SITEGRID_METRICS_ADDRESS), and with SITEGRID_METRICS_TOKEN also on the main listener to a bearer of that token.
 * The token is kept as its SHA-256 (config/load.ts) and compared in constant time.
 */

/** Whether `authorization` is `Bearer <the token whose SHA-256 is sealedToken>`. */
export function bearsMetricsToken(authorization: string | undefined, sealedToken: Buffer): boolean {
  const match = /^bearer +(\S+)$/i.exec(authorization ?? '') // RFC 9110 §11.1: the scheme in any case, as http/auth.ts reads it
  // Hashes of equal length whatever was sent: the comparison takes the same time for every wrong token.
  return match !== null && timingSafeEqual(createHash('sha256').update(match[1]!).digest(), sealedToken)
}

/**
 * GET /metrics on the main listener for the token's bearer. Anyone else gets exactly what an unknown path gets
 * (the not-found handler): the route neither authenticates a tenant nor says that it exists.
 */
export function installMetricsRoute(app: FastifyInstance, metrics: Metrics, sealedToken: Buffer): void {
  app.get('/metrics', { config: { policy: 'public' }, schema: { hide: true } }, async (request, reply) => {
    if (!bearsMetricsToken(request.headers.authorization, sealedToken)) return reply.callNotFound()
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics())
  })
}

export interface MetricsListener {
  address: AddressInfo
  close(): Promise<void>
}

/** The metrics' own listener (plain node:http: nothing of the API runs on it). Rejects when it cannot listen. */
export async function startMetricsListener(metrics: Metrics, o: { host: string; port: number; sealedToken: Buffer | undefined }): Promise<MetricsListener> {
  const server = createServer((request, response) => {
    if (request.url?.split('?')[0] !== '/metrics') return answer(response, 404, 'Not found: the metrics are at /metrics.')
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD')
      return answer(response, 405, 'Method not allowed.')
    }
    if (o.sealedToken && !bearsMetricsToken(request.headers.authorization, o.sealedToken)) {
      response.setHeader('www-authenticate', 'Bearer')
      return answer(response, 401, 'Unauthorized: send Authorization: Bearer <SITEGRID_METRICS_TOKEN>.')
    }
    metrics.registry.metrics().then(
      (body) => {
        response.writeHead(200, { 'content-type': metrics.registry.contentType })
        response.end(request.method === 'HEAD' ? undefined : body)
      },
      () => answer(response, 500, 'The metrics could not be collected.'),
    )
  })
  server.headersTimeout = 10_000
  server.requestTimeout = 10_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(o.port, o.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  return {
    address: server.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections() // a scraper's keep-alive connection must not hold the shutdown
      }),
  }
}

function answer(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' })
  response.end(`${text}\n`)
}
