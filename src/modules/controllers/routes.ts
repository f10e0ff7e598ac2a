import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import { problemResponses } from '../../http/problem.ts'
import {
  AssignControllerBody, ControllerPage, ControllerParams, ControllerSchema, CreateControllerBody, ListControllersQuery, SiteScopedParams, UpdateControllerBody,
} from './schemas.ts'
import type { ControllersService } from './service.ts'

const READ = 'Policy: members read (cloud: organisation role; site server: site role). A site or controller of another organisation or another site is the uniform 404.'
const WRITE = 'Policy: admins and owners (cloud: organisation role; site server: site role); members get 403. A site or controller of another organisation or another site is the uniform 404.'
const BUDGET = 'The answer carries `pollBudget`: the instances\' mapped tags against the poll interval, timeout and retries, with warnings (never a refusal).'
const TAGS = ['Controllers']

export const controllersRoutes: FastifyPluginAsyncTypebox<{ controllers: ControllersService }> = async (app, { controllers }) => {
  app.post('/:siteId/controllers', {
    config: { policy: 'admin', idempotent: true },
    schema: {
      tags: TAGS, summary: 'Create a controller',
      description: `Spec 2.3: \`name\`, \`platform\`, \`connection\` (\`protocol\`, \`ipAddress\`) and \`assetNumber\` required. The id (\`ctl_…\`) is assigned. \`cipPath\` is checked for CIP protocols. ${BUDGET} ${WRITE}`,
      params: SiteScopedParams, body: CreateControllerBody, response: { 201: ControllerSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429) },
    },
  }, async (request, reply) => reply.code(201).send(await controllers.create(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.body)))

  app.get('/:siteId/controllers', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'List the site\'s controllers', description: `Paged, ordered by id (ids are time-ordered: creation order to the millisecond); \`edgeId\` keeps those assigned to one edge gateway. ${READ}`,
      params: SiteScopedParams, querystring: ListControllersQuery, response: { 200: ControllerPage, ...problemResponses(400, 401, 403, 404, 429) },
    },
  }, async (request) => controllers.list(request.principal.orgId, request.params.siteId, request.query))

  app.get('/:siteId/controllers/:controllerId', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'Read a controller', description: `With the CIP route explained in words (\`cipRoute\`). ${BUDGET} ${READ}`,
      params: ControllerParams, response: { 200: ControllerSchema, ...problemResponses(401, 403, 404, 429) },
    },
  }, async (request) => controllers.get(request.principal.orgId, request.params.siteId, request.params.controllerId))

  app.put('/:siteId/controllers/:controllerId', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Update a controller',
      description: `Spec 2.3 update fields, all optional; an absent field is left as it is, a null clears a nullable one (\`name\`, \`firmwareVersion\`, \`connection.cipPath\`); \`connection\` merges field by field. ${BUDGET} ${WRITE}`,
      params: ControllerParams, body: UpdateControllerBody, response: { 200: ControllerSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
    },
  }, async (request) => controllers.update(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.controllerId, request.body))

  app.post('/:siteId/controllers/:controllerId/assign', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Assign a controller to an edge gateway',
      description: `Spec 4.2: \`edgeId\` (required, 0 to 50 characters) names the gateway that polls the controller, \`edgePlcId\` (nullable, 0 to 100) its id there. Reassigning replaces the previous assignment; an empty \`edgeId\` unassigns. ${WRITE}`,
      params: ControllerParams, body: AssignControllerBody, response: { 200: ControllerSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
    },
  }, async (request) => controllers.assign(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.controllerId, request.body))

  app.post('/:siteId/controllers/:controllerId/unassign', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Remove a controller\'s edge assignment', description: `No body. Clears \`edgeId\` and \`edgePlcId\`; idempotent. ${WRITE}`,
      params: ControllerParams, response: { 200: ControllerSchema, ...problemResponses(401, 403, 404, 429) },
    },
  }, async (request) => controllers.unassign(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.controllerId))

  app.delete('/:siteId/controllers/:controllerId', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Delete a controller',
      description: `Refused with 409 \`Conflict\` (and nothing changes) while instances reference the controller. ${WRITE}`,
      params: ControllerParams, response: { 204: { type: 'null', description: 'Deleted.' }, ...problemResponses(401, 403, 404, 409, 429) },
    },
  }, async (request, reply) => {
    await controllers.remove(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.controllerId)
    return reply.code(204).send(null)
  })
}
