import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import { problemResponses } from '../../http/problem.ts'
import {
  AssignControllerBody,
  ControllerPage,
  ControllerParams,
  ControllerSchema,
  ControllerWriteQuery,
  CreateControllerBody,
  ListControllersQuery,
  SiteScopedParams,
  UpdateControllerBody,
} from './schemas.ts'
import type { ControllersService } from './service.ts'
import { docs } from './docs.ts'

const TAGS = ['Controllers']

export const controllersRoutes: FastifyPluginAsyncTypebox<{ controllers: ControllersService }> = async (app, { controllers }) => {
  app.post(
    '/:siteId/controllers',
    {
      config: { policy: 'admin', idempotent: true },
      schema: {
        tags: TAGS,
        operationId: 'createController',
        summary: 'Create a controller',
        description: docs.createController,
        params: SiteScopedParams,
        querystring: ControllerWriteQuery,
        body: CreateControllerBody,
        response: { 201: ControllerSchema, 200: ControllerSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { orgId } = request.principal
      const dryRun = request.query.dryRun ?? false
      const controller = await controllers.create(orgId, actorOf(request.principal), request.params.siteId, request.body, { dryRun })
      return reply.code(dryRun ? 200 : 201).send(controller)
    },
  )

  app.get(
    '/:siteId/controllers',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'listControllers',
        summary: "List the site's controllers",
        description: docs.listControllers,
        params: SiteScopedParams,
        querystring: ListControllersQuery,
        response: { 200: ControllerPage, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => controllers.list(request.principal.orgId, request.params.siteId, request.query),
  )

  app.get(
    '/:siteId/controllers/:controllerId',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'getController',
        summary: 'Read a controller',
        description: docs.readController,
        params: ControllerParams,
        response: { 200: ControllerSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => controllers.get(request.principal.orgId, request.params.siteId, request.params.controllerId),
  )

  app.put(
    '/:siteId/controllers/:controllerId',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'updateController',
        summary: 'Update a controller',
        description: docs.updateController,
        params: ControllerParams,
        querystring: ControllerWriteQuery,
        body: UpdateControllerBody,
        response: { 200: ControllerSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request) =>
      controllers.update(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.controllerId, request.body, {
        dryRun: request.query.dryRun ?? false,
      }),
  )

  app.post(
    '/:siteId/controllers/:controllerId/assign',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'assignController',
        summary: 'Assign a controller to an edge gateway',
        description: docs.assignController,
        params: ControllerParams,
        body: AssignControllerBody,
        response: { 200: ControllerSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request) =>
      controllers.assign(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.controllerId, request.body),
  )

  app.post(
    '/:siteId/controllers/:controllerId/unassign',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'unassignController',
        summary: "Remove a controller's edge assignment",
        description: docs.unassignController,
        params: ControllerParams,
        response: { 200: ControllerSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => controllers.unassign(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.controllerId),
  )

  app.delete(
    '/:siteId/controllers/:controllerId',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'deleteController',
        summary: 'Delete a controller',
        description: docs.deleteController,
        params: ControllerParams,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...problemResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await controllers.remove(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.controllerId)
      return reply.code(204).send(null)
    },
  )
}
