import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import { problemResponses } from '../../http/problem.ts'
import { CreateSiteUserBody, ListSiteUsersQuery, SetPinBody, SiteUserPageSchema, SiteUserParams, SiteUserSchema, UpdateSiteUserBody } from './schemas.ts'
import type { SiteUsersService } from './service.ts'
import { docs } from './docs.ts'

const TAGS = ['Site users']

export const siteUsersRoutes: FastifyPluginAsyncTypebox<{ siteUsers: SiteUsersService }> = async (app, { siteUsers }) => {
  app.get(
    '/',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'listSiteUsers',
        summary: 'List site users',
        description: docs.listSiteUsers,
        querystring: ListSiteUsersQuery,
        response: { 200: SiteUserPageSchema, ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (request) => siteUsers.list(request.principal.orgId, request.query),
  )

  app.post(
    '/',
    {
      config: { policy: 'admin', idempotent: true, grantsAccess: true },
      schema: {
        tags: TAGS,
        operationId: 'createSiteUser',
        summary: 'Add a site user',
        description: docs.addSiteUser,
        body: CreateSiteUserBody,
        response: { 201: SiteUserSchema, ...problemResponses(400, 401, 403, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const user = await siteUsers.create(request.principal.orgId, actorOf(request.principal), request.body)
      return reply.code(201).send(user)
    },
  )

  app.get(
    '/:userId',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'getSiteUser',
        summary: 'Read a site user',
        description: docs.readSiteUser,
        params: SiteUserParams,
        response: { 200: SiteUserSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => siteUsers.get(request.principal.orgId, request.params.userId),
  )

  app.patch(
    '/:userId',
    {
      config: { policy: 'admin', grantsAccess: true },
      schema: {
        tags: TAGS,
        operationId: 'updateSiteUser',
        summary: 'Rename a site user or change their site role',
        description: docs.renameSiteUser,
        params: SiteUserParams,
        body: UpdateSiteUserBody,
        response: { 200: SiteUserSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (request) => siteUsers.update(request.principal.orgId, actorOf(request.principal), request.params.userId, request.body),
  )

  app.put(
    '/:userId/pin',
    {
      config: { policy: 'admin', grantsAccess: true },
      schema: {
        tags: TAGS,
        operationId: 'setSiteUserPin',
        summary: "Set a site user's PIN",
        description: docs.setSiteUserPin,
        params: SiteUserParams,
        body: SetPinBody,
        response: { 204: { type: 'null', description: 'PIN replaced.' }, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      await siteUsers.setPin(request.principal.orgId, actorOf(request.principal), request.params.userId, request.body.pin)
      return reply.code(204).send(null)
    },
  )

  app.delete(
    '/:userId',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'deleteSiteUser',
        summary: 'Remove a site user',
        description: docs.removeSiteUser,
        params: SiteUserParams,
        response: { 204: { type: 'null', description: 'Removed.' }, ...problemResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await siteUsers.remove(request.principal.orgId, actorOf(request.principal), request.params.userId)
      return reply.code(204).send(null)
    },
  )
}
