import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { actorOf } from '../../identity.ts'
import { problemResponses } from '../../http/problem.ts'
import type { OrgId } from '../../ids.ts'
import { ApproveMemberBody, ListMembersQuery, MemberListSchema, MemberParams, MemberSchema, OrgSlugParams } from './members-schemas.ts'
import type { MemberAdmin, MembersService } from './members-service.ts'
import type { OrgsService } from './service.ts'
import { targetOrg } from './target-org.ts'
import { docs } from './docs.ts'

export const membersRoutes: FastifyPluginAsyncTypebox<{ members: MembersService; orgs: OrgsService }> = async (app, { members, orgs }) => {
  const targetOrgId = async (request: FastifyRequest, slug: string): Promise<OrgId> => (await targetOrg(request, slug, orgs)).id
  const adminOf = (request: FastifyRequest): MemberAdmin => ({ actor: actorOf(request.principal), isPlatformAdmin: request.principal.isPlatformAdmin })

  app.get(
    '/:slug/members',
    {
      config: { policy: 'orgAdmin' },
      schema: {
        tags: ['Organisation administration'],
        operationId: 'listMembers',
        summary: 'List members and pending requests',
        description: docs.listMembers,
        params: OrgSlugParams,
        querystring: ListMembersQuery,
        response: { 200: MemberListSchema, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => members.list(await targetOrgId(request, request.params.slug), request.query),
  )

  app.post(
    '/:slug/members/:accountId/approve',
    {
      config: { policy: 'orgAdmin', grantsAccess: true },
      schema: {
        tags: ['Organisation administration'],
        operationId: 'approveMember',
        summary: 'Approve a membership request',
        description: docs.approveMembershipRequest,
        params: MemberParams,
        body: ApproveMemberBody,
        response: { 200: MemberSchema, ...problemResponses(400, 401, 403, 404, 409, 415, 429) },
      },
    },
    async (request) => {
      const orgId = await targetOrgId(request, request.params.slug)
      return members.approve(orgId, adminOf(request), request.params.accountId, request.body?.role ?? 'member')
    },
  )

  app.delete(
    '/:slug/members/:accountId',
    {
      config: { policy: 'orgAdmin' },
      schema: {
        tags: ['Organisation administration'],
        operationId: 'revokeMember',
        summary: 'Revoke a member or refuse a request',
        description: docs.revokeMember,
        params: MemberParams,
        response: { 204: { type: 'null', description: 'Revoked.' }, ...problemResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await members.revoke(await targetOrgId(request, request.params.slug), adminOf(request), request.params.accountId)
      return reply.code(204).send(null)
    },
  )
}
