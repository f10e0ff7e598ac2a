import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import { problemResponses } from '../../http/problem.ts'
import {
  BindDomainBody,
  DomainBindingPage,
  DomainBindingSchema,
  DomainParams,
  ListDomainsQuery,
  OrgSlugParams,
  SetDomainEnabledBody,
} from './domains-schemas.ts'
import type { DomainsService } from './domains-service.ts'
import type { OrgsService } from './service.ts'
import { targetOrg } from './target-org.ts'
import { docs } from './docs.ts'

/** Mounted at /api/admin/orgs. */
export const domainsRoutes: FastifyPluginAsyncTypebox<{ domains: DomainsService; orgs: Pick<OrgsService, 'findBySlug'> }> = async (app, { domains, orgs }) => {
  app.post(
    '/:slug/domains',
    {
      config: { policy: 'orgAdmin', idempotent: true },
      schema: {
        tags: ['Organisation administration'],
        operationId: 'bindDomain',
        summary: 'Bind a custom domain',
        description: docs.bindCustomDomain,
        params: OrgSlugParams,
        body: BindDomainBody,
        response: { 201: DomainBindingSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const org = await targetOrg(request, request.params.slug, orgs)
      return reply.code(201).send(await domains.bind(org.id, actorOf(request.principal), request.body.domain))
    },
  )

  app.get(
    '/:slug/domains',
    {
      config: { policy: 'orgAdmin' },
      schema: {
        tags: ['Organisation administration'],
        operationId: 'listDomains',
        summary: 'List the domain bindings',
        description: docs.listDomainBindings,
        params: OrgSlugParams,
        querystring: ListDomainsQuery,
        response: { 200: DomainBindingPage, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const org = await targetOrg(request, request.params.slug, orgs)
      return domains.list(org.id, { limit: request.query.limit ?? 100, cursor: request.query.cursor })
    },
  )

  app.patch(
    '/:slug/domains/:domain',
    {
      config: { policy: 'orgAdmin' },
      schema: {
        tags: ['Organisation administration'],
        operationId: 'updateDomain',
        summary: 'Enable or disable a domain binding',
        description: docs.updateDomainBinding,
        params: DomainParams,
        body: SetDomainEnabledBody,
        response: { 200: DomainBindingSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request) => {
      const org = await targetOrg(request, request.params.slug, orgs)
      return domains.setEnabled(org.id, actorOf(request.principal), request.params.domain, request.body.isEnabled)
    },
  )

  app.delete(
    '/:slug/domains/:domain',
    {
      config: { policy: 'orgAdmin' },
      schema: {
        tags: ['Organisation administration'],
        operationId: 'unbindDomain',
        summary: 'Remove a domain binding',
        description: docs.removeDomainBinding,
        params: DomainParams,
        response: { 204: { type: 'null', description: 'Removed.' }, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const org = await targetOrg(request, request.params.slug, orgs)
      await domains.unbind(org.id, actorOf(request.principal), request.params.domain)
      return reply.code(204).send(null)
    },
  )
}
