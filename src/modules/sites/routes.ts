import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import { problemResponses } from '../../http/problem.ts'
import { CreateSiteBody, DeleteSiteQuery, ListSitesQuery, SiteParams, SitePage, SiteSchema, UpdateSiteBody } from './schemas.ts'
import type { SitesService } from './service.ts'

const READ = 'Policy: members read (cloud: organisation role; site server: site role).'
const WRITE = 'Policy: admins and owners (cloud: organisation role; site server: site role); members get 403.'

export const sitesRoutes: FastifyPluginAsyncTypebox<{ sites: SitesService }> = async (app, { sites }) => {
  app.post('/', {
    config: { policy: 'admin', idempotent: true },
    schema: {
      tags: ['Sites'], summary: 'Create a site', description: `\`code\` and \`name\` are required; \`timeZone\` defaults to UTC and \`status\` to 0 (Planned). ${WRITE}`,
      body: CreateSiteBody, response: { 201: SiteSchema, ...problemResponses(400, 401, 403, 409, 413, 415, 429) },
    },
  }, async (request, reply) => reply.code(201).send(await sites.create(request.principal.orgId, actorOf(request.principal), request.body)))

  app.get('/', {
    config: { policy: 'member' },
    schema: {
      tags: ['Sites'], summary: 'List sites', description: `Paged, ordered by code. ${READ}`,
      querystring: ListSitesQuery, response: { 200: SitePage, ...problemResponses(400, 401, 403, 429) },
    },
  }, async (request) => sites.list(request.principal.orgId, request.query))

  app.get('/:code', {
    config: { policy: 'member' },
    schema: { tags: ['Sites'], summary: 'Read a site', description: READ, params: SiteParams, response: { 200: SiteSchema, ...problemResponses(401, 403, 404, 429) } },
  }, async (request) => sites.require(request.principal.orgId, request.params.code))

  app.put('/:code', {
    config: { policy: 'admin' },
    schema: {
      tags: ['Sites'], summary: 'Update a site', description: `Spec 2.2 and 4.2: name, description, location, timeZone (IANA), status; all optional. ${WRITE}`,
      params: SiteParams, body: UpdateSiteBody, response: { 200: SiteSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
    },
  }, async (request) => sites.update(request.principal.orgId, actorOf(request.principal), request.params.code, request.body))

  app.delete('/:code', {
    config: { policy: 'admin' },
    schema: {
      tags: ['Sites'], summary: 'Delete a site and everything it owns',
      description: `Deletes the site with its controllers, instances, electrical network, alarms and historian data in one transaction — only when \`confirm\` equals the site's code. Otherwise nothing changes and the 409 \`ConfirmationRequired\` lists in \`wouldDelete\` how many records of each kind would go. ${WRITE}`,
      params: SiteParams, querystring: DeleteSiteQuery, response: { 204: { type: 'null', description: 'Deleted.' }, ...problemResponses(401, 403, 404, 409, 429) },
    },
  }, async (request, reply) => {
    await sites.remove(request.principal.orgId, actorOf(request.principal), request.params.code, request.query.confirm)
    return reply.code(204).send(null)
  })
}
