import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import { problemResponses } from '../../http/problem.ts'
import { CreateSiteBody, DeleteSiteQuery, ListSitesQuery, SiteParams, SitePage, SiteSchema, UpdateSiteBody } from './schemas.ts'
import type { SitesService } from './service.ts'
import { docs } from './docs.ts'

export const sitesRoutes: FastifyPluginAsyncTypebox<{ sites: SitesService }> = async (app, { sites }) => {
  app.post(
    '/',
    {
      config: { policy: 'admin', idempotent: true },
      schema: {
        tags: ['Sites'],
        operationId: 'createSite',
        summary: 'Create a site',
        description: docs.createSite,
        body: CreateSiteBody,
        response: { 201: SiteSchema, ...problemResponses(400, 401, 403, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await sites.create(request.principal.orgId, actorOf(request.principal), request.body)),
  )

  app.get(
    '/',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Sites'],
        operationId: 'listSites',
        summary: 'List sites',
        description: docs.listSites,
        querystring: ListSitesQuery,
        response: { 200: SitePage, ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (request) => sites.list(request.principal.orgId, request.query),
  )

  app.get(
    '/:code',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Sites'],
        operationId: 'getSite',
        summary: 'Read a site',
        params: SiteParams,
        response: { 200: SiteSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => sites.require(request.principal.orgId, request.params.code),
  )

  app.put(
    '/:code',
    {
      config: { policy: 'admin' },
      schema: {
        tags: ['Sites'],
        operationId: 'updateSite',
        summary: 'Update a site',
        description: docs.updateSite,
        params: SiteParams,
        body: UpdateSiteBody,
        response: { 200: SiteSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request) => sites.update(request.principal.orgId, actorOf(request.principal), request.params.code, request.body),
  )

  app.delete(
    '/:code',
    {
      config: { policy: 'admin' },
      schema: {
        tags: ['Sites'],
        operationId: 'deleteSite',
        summary: 'Delete a site and everything it owns',
        description: docs.deleteSite,
        params: SiteParams,
        querystring: DeleteSiteQuery,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...problemResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await sites.remove(request.principal.orgId, actorOf(request.principal), request.params.code, request.query.confirm)
      return reply.code(204).send(null)
    },
  )
}
