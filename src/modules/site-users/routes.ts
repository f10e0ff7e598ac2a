import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import { problemResponses } from '../../http/problem.ts'
import {
  CreateSiteUserBody, ListSiteUsersQuery, SetPinBody, SiteUserPageSchema, SiteUserParams, SiteUserSchema, UpdateSiteUserBody,
} from './schemas.ts'
import type { SiteUsersService } from './service.ts'

const POLICY_NOTE = 'Site server only. Policy: site role owner or admin (a site-PIN principal or an API key of that role); members get 403. Nobody gives a role above their own or manages a user ranked above them (403).'
const TAGS = ['Site users']

export const siteUsersRoutes: FastifyPluginAsyncTypebox<{ siteUsers: SiteUsersService }> = async (app, { siteUsers }) => {
  app.get('/', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'List site users',
      description: `Ordered by e-mail; paged with \`limit\` and \`cursor\`. Never a PIN or its hash. ${POLICY_NOTE}`,
      querystring: ListSiteUsersQuery,
      response: { 200: SiteUserPageSchema, ...problemResponses(400, 401, 403, 429) },
    },
  }, async (request) => siteUsers.list(request.principal.orgId, request.query))

  app.post('/', {
    config: { policy: 'admin', idempotent: true },
    schema: {
      tags: TAGS, summary: 'Add a site user',
      description: `The PIN (6 to 12 digits) is hashed with scrypt and never returned. 409 \`Conflict\` when the e-mail is taken. ${POLICY_NOTE}`,
      body: CreateSiteUserBody,
      response: { 201: SiteUserSchema, ...problemResponses(400, 401, 403, 409, 413, 415, 429) },
    },
  }, async (request, reply) => {
    const user = await siteUsers.create(request.principal.orgId, actorOf(request.principal), request.body)
    return reply.code(201).send(user)
  })

  app.get('/:userId', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Read a site user',
      description: `An absent or foreign user answers the uniform 404. ${POLICY_NOTE}`,
      params: SiteUserParams,
      response: { 200: SiteUserSchema, ...problemResponses(401, 403, 404, 429) },
    },
  }, async (request) => siteUsers.get(request.principal.orgId, request.params.userId))

  app.patch('/:userId', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Rename a site user or change their site role',
      description: `Demoting the last owner answers 409 \`Conflict\`. The new role takes effect on the user's next request. ${POLICY_NOTE}`,
      params: SiteUserParams,
      body: UpdateSiteUserBody,
      response: { 200: SiteUserSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429) },
    },
  }, async (request) => siteUsers.update(request.principal.orgId, actorOf(request.principal), request.params.userId, request.body))

  app.put('/:userId/pin', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Set a site user\'s PIN',
      description: `204. Every access and refresh token the user held stops working. ${POLICY_NOTE}`,
      params: SiteUserParams,
      body: SetPinBody,
      response: { 204: { type: 'null', description: 'PIN replaced.' }, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
    },
  }, async (request, reply) => {
    await siteUsers.setPin(request.principal.orgId, actorOf(request.principal), request.params.userId, request.body.pin)
    return reply.code(204).send(null)
  })

  app.delete('/:userId', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Remove a site user',
      description: `204; their tokens stop working at once. The last owner cannot be removed (409 \`Conflict\`). ${POLICY_NOTE}`,
      params: SiteUserParams,
      response: { 204: { type: 'null', description: 'Removed.' }, ...problemResponses(401, 403, 404, 409, 429) },
    },
  }, async (request, reply) => {
    await siteUsers.remove(request.principal.orgId, actorOf(request.principal), request.params.userId)
    return reply.code(204).send(null)
  })
}
