import { createHash, timingSafeEqual } from 'node:crypto'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { ErrorCode } from '../errors/catalog.ts'
import { clientErrorProblem } from './client-error.ts'
import type { Metrics } from './metrics.ts'
import { PROBLEM_CONTENT_TYPE, problemOf } from './problem.ts'

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

/**
 * The metrics' own listener (plain node:http: nothing of the API runs on it). Rejects when it cannot listen. Its
 * refusals are problem documents as the API's are (`instance`: `metrics-` and a counter), those of Node's HTTP parser
 * included (http/client-error.ts).
 */
export async function startMetricsListener(
  metrics: Metrics,
  o: { host: string; port: number; sealedToken: Buffer | undefined; log: FastifyBaseLogger },
): Promise<MetricsListener> {
  let counter = 0
  const nextInstance = () => `metrics-${(counter++ % 0xffffffff).toString(16).padStart(8, '0')}`
  const answer = (response: ServerResponse, code: ErrorCode, detail: string): void => {
    const problem = problemOf(code, detail, nextInstance())
    const json = JSON.stringify(problem)
    response.writeHead(problem.status, { 'content-type': PROBLEM_CONTENT_TYPE, 'x-content-type-options': 'nosniff' })
    response.end(json)
  }
  const server = createServer((request, response) => {
    if (request.url?.split('?')[0] !== '/metrics') return answer(response, 'NotFound', 'The metrics are at /metrics.')
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD')
      return answer(response, 'MethodNotAllowed', 'The metrics are read with GET (or HEAD).')
    }
    if (o.sealedToken && !bearsMetricsToken(request.headers.authorization, o.sealedToken)) {
      response.setHeader('www-authenticate', 'Bearer')
      return answer(response, 'Unauthorized', 'Send Authorization: Bearer <SITEGRID_METRICS_TOKEN>.')
    }
    metrics.registry.metrics().then(
      (body) => {
        response.writeHead(200, { 'content-type': metrics.registry.contentType })
        response.end(request.method === 'HEAD' ? undefined : body)
      },
      () => answer(response, 'InternalError', 'The metrics could not be collected.'),
    )
  })
  server.on('clientError', clientErrorProblem(nextInstance, o.log))
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
