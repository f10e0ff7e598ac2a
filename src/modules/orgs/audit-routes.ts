import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { DatabaseHandle } from '../../db/connect.ts'
import { Page, PageQuery } from '../../http/paging.ts'
import { problemResponses } from '../../http/problem.ts'
import { readAuditPage } from '../audit/service.ts'
import { OrgSlugParams } from './domains-schemas.ts'
import type { OrgsService } from './service.ts'
import { targetOrg } from './target-org.ts'
import { docs } from './docs.ts'

export const AuditEventSchema = Type.Object({
  id: Type.String({ description: 'Time-ordered id (`aud_…`).' }),
  at: Type.String({ format: 'date-time', description: 'When the change committed.' }),
  actorKind: Type.String({ description: 'Who: `apiKey`, `user`, `sitePin` or `cli`.' }),
  actorId: Type.String({ description: 'The actor\'s subject: a keyId, an OIDC `sub`, a site user id, or `cli`.' }),
  action: Type.String({ description: 'What, e.g. `api_key.minted`, `api_key.revoked`, `domain.bound`, `domain.enabled`, `config.reloaded`, `config.reload_refused`.' }),
  target: Type.String({ description: 'What it was done to: a keyId, a domain, `config`, …' }),
  detail: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'Action-specific facts (a reason, the settings changed); never a secret.' }),
}, { $id: 'AuditEvent', additionalProperties: false })

export const ListAuditQuery = Type.Object({
  ...PageQuery({ defaultLimit: 50, maxLimit: 200 }),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z_.]+$', description: 'Only actions starting with this prefix (case-sensitive), e.g. `domain.` or `api_key`.' })),
}, { additionalProperties: false })

/** Mounted at /api/admin/orgs. */
export const auditRoutes: FastifyPluginAsyncTypebox<{ handle: DatabaseHandle; orgs: Pick<OrgsService, 'findBySlug'> }> = async (app, { handle, orgs }) => {
  app.get('/:slug/audit', {
    config: { policy: 'orgAdmin' },
    schema: {
      tags: ['Organisation administration'], summary: 'Read the organisation\'s audit trail',
      description: docs.readAuditTrail,
      params: OrgSlugParams,
      querystring: ListAuditQuery,
      response: { 200: Page(AuditEventSchema, 'Newest first.'), ...problemResponses(400, 401, 403, 404, 429) },
    },
  }, async (request) => {
    const org = await targetOrg(request, request.params.slug, orgs)
    return readAuditPage(handle.db, org.id, { limit: request.query.limit ?? 50, cursor: request.query.cursor, actionPrefix: request.query.action })
  })
}
