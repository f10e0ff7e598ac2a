import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problemResponses } from '../../http/problem.ts'
import { withHeaders } from '../../http/openapi.ts'
import { docs } from './docs.ts'
import {
  EdgeConfigParams,
  EdgeConfigSchema,
  EdgeHeartbeatBody,
  EdgeStatusListSchema,
  EdgeStatusSchema,
  HeartbeatResultSchema,
  SiteEdgesParams,
} from './schemas.ts'
import type { EdgesService } from './service.ts'

const ETAG = { ETag: { type: 'string', description: "The configuration's version, quoted: send it as `If-None-Match`." } }

/** RFC 9110 §13.1.2: `If-None-Match` holds `*` or a list of entity tags, compared weakly (a `W/` prefix is ignored). */
function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  return header.split(',').some((tag) => {
    const t = tag.trim()
    return t === '*' || (t.startsWith('W/') ? t.slice(2) : t) === etag
  })
}

export const edgesRoutes: FastifyPluginAsyncTypebox<{ edges: EdgesService }> = async (app, { edges }) => {
  app.get(
    '/:siteId/edges/:edgeId/config',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Edge gateways'],
        operationId: 'getEdgeConfig',
        summary: "An edge gateway's polling configuration",
        description: docs.edgeConfig,
        params: EdgeConfigParams,
        response: {
          200: withHeaders(EdgeConfigSchema, ETAG),
          304: withHeaders({ type: 'null', description: 'Unchanged since the `If-None-Match` ETag.' }, ETAG),
          ...problemResponses(401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const { siteId, edgeId } = request.params
      const orgId = request.principal.orgId
      reply.header('cache-control', 'no-cache')
      const current = `"${await edges.configVersion(orgId, siteId)}"`
      if (noneMatch(request.headers['if-none-match'], current)) return reply.code(304).header('etag', current).send()
      const config = await edges.config(orgId, siteId, edgeId)
      return reply.header('etag', `"${config.version}"`).send(config)
    },
  )

  app.put(
    '/:siteId/edges/:edgeId/status',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Edge gateways'],
        operationId: 'putEdgeStatus',
        summary: "An edge gateway's heartbeat",
        description: docs.putEdgeStatus,
        params: EdgeConfigParams,
        body: EdgeHeartbeatBody,
        response: { 200: HeartbeatResultSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 429, 503) },
      },
    },
    async (request) => edges.report(request.principal.orgId, request.params.siteId, request.params.edgeId, request.body),
  )

  app.get(
    '/:siteId/edges/:edgeId/status',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Edge gateways'],
        operationId: 'getEdgeStatus',
        summary: "An edge gateway's state and its controllers'",
        description: docs.getEdgeStatus,
        params: EdgeConfigParams,
        response: { 200: EdgeStatusSchema, ...problemResponses(401, 403, 404, 429, 503) },
      },
    },
    async (request) => edges.status(request.principal.orgId, request.params.siteId, request.params.edgeId),
  )

  app.get(
    '/:siteId/edges',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Edge gateways'],
        operationId: 'listEdgeStatus',
        summary: "The site's edge gateways with their state",
        description: docs.listEdgeStatus,
        params: SiteEdgesParams,
        response: { 200: EdgeStatusListSchema, ...problemResponses(401, 403, 404, 429, 503) },
      },
    },
    async (request) => ({ items: await edges.list(request.principal.orgId, request.params.siteId) }),
  )
}
