import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../../identity.ts'
import { problemResponses } from '../../../http/problem.ts'
import { ListSiteServersQuery, RegisterSiteServerBody, SiteServerPage, SiteServerParams, SiteServerSchema, SiteServerWithCodeSchema } from './schemas.ts'
import type { SiteServersService } from './service.ts'
import { docs } from './docs.ts'
import { NO_STORE, withHeaders } from '../../../http/openapi.ts'

const TAGS = ['Fleet link']

/** Mounted at /api/admin/site-servers, cloud mode only (a site server has none of these routes). */
export const siteServersRoutes: FastifyPluginAsyncTypebox<{ siteServers: SiteServersService }> = async (app, { siteServers }) => {
  app.post(
    '/',
    {
      config: { policy: 'orgAdmin', grantsAccess: true },
      schema: {
        tags: TAGS,
        operationId: 'registerSiteServer',
        summary: 'Register a site server',
        description: docs.registerSiteServer,
        body: RegisterSiteServerBody,
        response: { 201: withHeaders(SiteServerWithCodeSchema, NO_STORE), ...problemResponses(400, 401, 403, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const registered = await siteServers.register(request.principal.orgId, actorOf(request.principal), request.body)
      return reply.code(201).header('cache-control', 'no-store').send(registered)
    },
  )

  app.get(
    '/',
    {
      config: { policy: 'orgAdmin' },
      schema: {
        tags: TAGS,
        operationId: 'listSiteServers',
        summary: 'List the site servers',
        description: docs.listSiteServers,
        querystring: ListSiteServersQuery,
        response: { 200: SiteServerPage, ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (request) => siteServers.list(request.principal.orgId, request.query),
  )

  app.get(
    '/:id',
    {
      config: { policy: 'orgAdmin' },
      schema: {
        tags: TAGS,
        operationId: 'getSiteServer',
        summary: 'Read a site server',
        description: docs.readSiteServer,
        params: SiteServerParams,
        response: { 200: SiteServerSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => siteServers.get(request.principal.orgId, request.params.id),
  )

  app.post(
    '/:id/revoke',
    {
      config: { policy: 'orgAdmin' },
      schema: {
        tags: TAGS,
        operationId: 'revokeSiteServer',
        summary: "Revoke a site server's link credential",
        description: docs.revokeSiteServer,
        params: SiteServerParams,
        response: { 200: SiteServerSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => siteServers.revoke(request.principal.orgId, actorOf(request.principal), request.params.id),
  )

  app.post(
    '/:id/enrolment-code',
    {
      config: { policy: 'orgAdmin', grantsAccess: true },
      schema: {
        tags: TAGS,
        operationId: 'issueEnrolmentCode',
        summary: 'Issue a new enrolment code',
        description: docs.issueEnrolmentCode,
        params: SiteServerParams,
        response: { 201: withHeaders(SiteServerWithCodeSchema, NO_STORE), ...problemResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const issued = await siteServers.issueEnrolmentCode(request.principal.orgId, actorOf(request.principal), request.params.id)
      return reply.code(201).header('cache-control', 'no-store').send(issued)
    },
  )
}
