import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problemResponses } from '../../http/problem.ts'
import { withHeaders } from '../../http/openapi.ts'
import { docs } from './docs.ts'
import { EdgeConfigParams, EdgeConfigSchema } from './schemas.ts'
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
}
