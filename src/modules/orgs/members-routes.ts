import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { actorOf } from '../../identity.ts'
import { problemResponses } from '../../http/problem.ts'
import type { OrgId } from '../../ids.ts'
import { ApproveMemberBody, ListMembersQuery, MemberListSchema, MemberParams, MemberSchema, OrgSlugParams } from './members-schemas.ts'
import type { MemberAdmin, MembersService } from './members-service.ts'
import type { OrgsService } from './service.ts'
import { targetOrg } from './target-org.ts'

const POLICY_NOTE = 'Policy: OrgAdmin — organisation owner or admin (a user or an API key), or a platform admin; a site-PIN principal or a member: 403. `{slug}` must be the host\'s organisation, else the uniform 404, unless the caller is a platform admin.'

export const membersRoutes: FastifyPluginAsyncTypebox<{ members: MembersService; orgs: OrgsService }> = async (app, { members, orgs }) => {
  const targetOrgId = async (request: FastifyRequest, slug: string): Promise<OrgId> => (await targetOrg(request, slug, orgs)).id
  const adminOf = (request: FastifyRequest): MemberAdmin => ({ actor: actorOf(request.principal), isPlatformAdmin: request.principal.isPlatformAdmin })

  app.get('/:slug/members', {
    config: { policy: 'orgAdmin' },
    schema: {
      tags: ['Organisation administration'], summary: 'List members and pending requests',
      description: `Pending requests and active members with the e-mail and name from their latest sign-in, ordered by accountId; revoked accounts are not listed. ${POLICY_NOTE}`,
      params: OrgSlugParams, querystring: ListMembersQuery,
      response: { 200: MemberListSchema, ...problemResponses(400, 401, 403, 404, 429) },
    },
  }, async (request) => members.list(await targetOrgId(request, request.params.slug), request.query))

  app.post('/:slug/members/:accountId/approve', {
    config: { policy: 'orgAdmin' },
    schema: {
      tags: ['Organisation administration'], summary: 'Approve a membership request',
      description: `Activates a pending request with \`role\` (default \`member\`), effective at once in every process. A role above the caller's: 403. Already active: 409. No pending request (absent, revoked, another organisation's): the uniform 404. ${POLICY_NOTE}`,
      params: MemberParams, body: ApproveMemberBody,
      response: { 200: MemberSchema, ...problemResponses(400, 401, 403, 404, 409, 415, 429) },
    },
  }, async (request) => {
    const orgId = await targetOrgId(request, request.params.slug)
    return members.approve(orgId, adminOf(request), request.params.accountId, request.body?.role ?? 'member')
  })

  app.delete('/:slug/members/:accountId', {
    config: { policy: 'orgAdmin' },
    schema: {
      tags: ['Organisation administration'], summary: 'Revoke a member or refuse a request',
      description: `204 with no body. The account loses its role at once and its browser sessions at this organisation end; its next call is 403. The last owner cannot be removed (409); a member whose role is above the caller's neither (403). Absent or already revoked: the uniform 404. ${POLICY_NOTE}`,
      params: MemberParams,
      response: { 204: { type: 'null', description: 'Revoked.' }, ...problemResponses(401, 403, 404, 409, 429) },
    },
  }, async (request, reply) => {
    await members.revoke(await targetOrgId(request, request.params.slug), adminOf(request), request.params.accountId)
    return reply.code(204).send(null)
  })
}
