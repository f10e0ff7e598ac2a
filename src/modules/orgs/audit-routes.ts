import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { DatabaseHandle } from '../../db/connect.ts'
import { Page } from '../../http/paging.ts'
import { problemResponses } from '../../http/problem.ts'
import { AuditEventSchema, ListAuditQuery } from '../audit/schemas.ts'
import { readAuditPage } from '../audit/service.ts'
import { OrgSlugParams } from './domains-schemas.ts'
import type { OrgsService } from './service.ts'
import { targetOrg } from './target-org.ts'
import { docs } from './docs.ts'

/** Mounted at /api/admin/orgs. */
export const auditRoutes: FastifyPluginAsyncTypebox<{ handle: DatabaseHandle; orgs: Pick<OrgsService, 'findBySlug'> }> = async (app, { handle, orgs }) => {
  app.get(
    '/:slug/audit',
    {
      config: { policy: 'orgAdmin' },
      schema: {
        tags: ['Organisation administration'],
        operationId: 'listAuditEvents',
        summary: "Read the organisation's audit trail",
        description: docs.readAuditTrail,
        params: OrgSlugParams,
        querystring: ListAuditQuery,
        response: { 200: Page(AuditEventSchema, 'Newest first.'), ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const org = await targetOrg(request, request.params.slug, orgs)
      return readAuditPage(handle.db, org.id, { limit: request.query.limit ?? 50, cursor: request.query.cursor, actionPrefix: request.query.action })
    },
  )
}
