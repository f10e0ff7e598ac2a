import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problemResponses } from '../../http/problem.ts'
import { actorOf } from '../../identity.ts'
import { docs } from './docs.ts'
import { ListTagMarksQuery, SeriesParams, TagMarkBody, TagMarkPage, TagMarkParams, TagMarkSchema } from './schemas.ts'
import { createTagMarkService, type TagMarkDeps } from './service/tag-marks.ts'

/** GET /api/sites/{siteId}/historian/tags and PUT/DELETE …/tags/{instanceId}/{tag}: the tags marked discrete (or linear). */
export const historianTagRoutes: FastifyPluginAsyncTypebox<TagMarkDeps> = async (app, deps) => {
  const marks = createTagMarkService(deps)

  app.get(
    '/:siteId/historian/tags',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Historian'],
        operationId: 'listHistorianTagMarks',
        summary: "List a site's tag marks",
        description: docs.listTagMarks,
        params: SeriesParams,
        querystring: ListTagMarksQuery,
        response: { 200: TagMarkPage, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => marks.list(request.principal.orgId, request.params.siteId, request.query),
  )

  app.put(
    '/:siteId/historian/tags/:instanceId/:tag',
    {
      config: { policy: 'admin' },
      schema: {
        tags: ['Historian'],
        operationId: 'setHistorianTagMark',
        summary: "Mark a tag's interpolation (step for a discrete tag)",
        description: docs.setTagMark,
        params: TagMarkParams,
        body: TagMarkBody,
        response: { 200: TagMarkSchema, ...problemResponses(400, 401, 403, 404, 415, 422, 429) },
      },
    },
    async (request) => {
      const { siteId, instanceId, tag } = request.params
      return marks.set(request.principal.orgId, actorOf(request.principal), siteId, instanceId, tag, request.body.interpolation)
    },
  )

  app.delete(
    '/:siteId/historian/tags/:instanceId/:tag',
    {
      config: { policy: 'admin' },
      schema: {
        tags: ['Historian'],
        operationId: 'deleteHistorianTagMark',
        summary: "Remove a tag's mark (back to linear)",
        description: docs.deleteTagMark,
        params: TagMarkParams,
        response: { 204: { type: 'null', description: 'Removed (or there was none).' }, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const { siteId, instanceId, tag } = request.params
      await marks.remove(request.principal.orgId, actorOf(request.principal), siteId, instanceId, tag)
      return reply.code(204).send(null)
    },
  )
}
