import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problemResponses } from '../../http/problem.ts'
import { actorOf } from '../../identity.ts'
import { conflictDocs as docs } from './conflict-docs.ts'
import type { ConflictsService } from './sync/conflicts.ts'
import { ConflictListSchema, ConflictParams, ConflictSchema, ListConflictsQuery } from './sync/schemas.ts'

/**
 * `/api/link/conflicts`: the versions that lost under the link's conflict rule. In the cloud an organisation admin
 * lists, reads, re-applies and dismisses them; on a site server an admin reads the cloud's records as pulled (the site
 * cannot resolve them: the cloud decides).
 */
export const linkConflictRoutes: FastifyPluginAsyncTypebox<{ conflicts: ConflictsService; mode: 'cloud' | 'site' }> = async (app, { conflicts, mode }) => {
  const policy = mode === 'cloud' ? 'orgAdmin' : 'admin'
  const tags = ['Fleet link']

  app.get(
    '/',
    {
      config: { policy },
      schema: {
        tags,
        operationId: 'listLinkConflicts',
        summary: 'List link conflicts',
        description: docs.listConflicts,
        querystring: ListConflictsQuery,
        response: { 200: ConflictListSchema, ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (request) => conflicts.list(request.principal.orgId, request.query),
  )

  app.get(
    '/:id',
    {
      config: { policy },
      schema: {
        tags,
        operationId: 'getLinkConflict',
        summary: 'Read a link conflict',
        description: docs.getConflict,
        params: ConflictParams,
        response: { 200: ConflictSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => conflicts.get(request.principal.orgId, request.params.id),
  )

  if (mode !== 'cloud') return

  app.post(
    '/:id/reapply',
    {
      config: { policy },
      schema: {
        tags,
        operationId: 'reapplyLinkConflict',
        summary: 'Re-apply the losing version of a link conflict',
        description: docs.reapplyConflict,
        params: ConflictParams,
        response: { 200: ConflictSchema, ...problemResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request) => conflicts.reapply(request.principal.orgId, request.params.id, actorOf(request.principal)),
  )

  app.post(
    '/:id/dismiss',
    {
      config: { policy },
      schema: {
        tags,
        operationId: 'dismissLinkConflict',
        summary: 'Dismiss a link conflict (keep the cloud version)',
        description: docs.dismissConflict,
        params: ConflictParams,
        response: { 200: ConflictSchema, ...problemResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request) => conflicts.dismiss(request.principal.orgId, request.params.id, actorOf(request.principal)),
  )
}
