import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import { problemResponses, unsupportedMediaType } from '../../http/problem.ts'
import type { OrgsService } from '../orgs/service.ts'
import { targetOrg } from '../orgs/target-org.ts'
import { ExportQuery, ImportQuery, ImportReportSchema, OrgSlugParams, PackageFile, StagedSchema } from './schemas.ts'
import type { TenantTransferService } from './service.ts'
import { docs } from './docs.ts'

const PACKAGE_TYPES = ['application/gzip', 'application/octet-stream']

export const tenantTransferRoutes: FastifyPluginAsyncTypebox<{ transfer: TenantTransferService; orgs: OrgsService }> = async (app, { transfer, orgs }) => {
  // The package body is streamed to the database as it arrives, never buffered whole.
  app.addContentTypeParser(PACKAGE_TYPES, (_request, payload, done) => done(null, payload))

  app.get(
    '/:slug/tenant/export',
    {
      config: { policy: 'owner' },
      schema: {
        tags: ['Tenant transfer'],
        operationId: 'exportTenant',
        summary: 'Export the organisation (or one site) as a package',
        description: docs.exportOrganisation,
        params: OrgSlugParams,
        querystring: ExportQuery,
        response: {
          200: {
            description: 'The package (application/gzip), streamed.',
            headers: { 'Content-Disposition': { type: 'string', description: '`attachment; filename="{slug}[-{siteId}].sitegrid.jsonl.gz"`' } },
            content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
          },
          ...problemResponses(401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const org = await targetOrg(request, request.params.slug, orgs)
      const stream = await transfer.exportPackage(org, request.query.siteId ?? null)
      const name = `${org.slug}${request.query.siteId ? `-${request.query.siteId}` : ''}.sitegrid.jsonl.gz`
      return reply
        .type('application/gzip')
        .header('content-disposition', `attachment; filename="${name}"`)
        .send(stream as never) // a stream, documented above as binary
    },
  )

  app.put(
    '/:slug/tenant/import/package',
    {
      config: { policy: 'owner' },
      schema: {
        tags: ['Tenant transfer'],
        operationId: 'stageTenantPackage',
        summary: 'Stage a package for import',
        description: docs.stagePackage,
        params: OrgSlugParams,
        requestBody: { content: { 'application/gzip': { schema: PackageFile }, 'application/octet-stream': { schema: PackageFile } } },
        response: { 200: StagedSchema, ...problemResponses(401, 403, 404, 413, 415, 422, 429) },
      },
      // Before any parser runs: the JSON parser every route inherits would otherwise hand the handler an object.
      preParsing: async (request) => {
        refuseNonPackage(request.headers)
      },
    },
    async (request) => {
      const org = await targetOrg(request, request.params.slug, orgs)
      const staged = await transfer.stage(org, actorOf(request.principal), request.body as AsyncIterable<Buffer>)
      return {
        uploadId: staged.uploadId,
        bytes: staged.bytes,
        formatVersion: staged.header.formatVersion,
        sourceMode: staged.header.sourceMode,
        exportedAt: staged.header.exportedAt,
        site: staged.header.site,
        counts: staged.counts,
      }
    },
  )

  app.post(
    '/:slug/tenant/import',
    {
      config: { policy: 'owner', grantsAccess: true },
      schema: {
        tags: ['Tenant transfer'],
        operationId: 'importTenant',
        summary: 'Apply the staged package',
        description: docs.applyStagedPackage,
        params: OrgSlugParams,
        querystring: ImportQuery,
        response: { 200: ImportReportSchema, ...problemResponses(401, 403, 404, 409, 422, 429) },
      },
    },
    async (request) => {
      const org = await targetOrg(request, request.params.slug, orgs)
      return transfer.applyStaged(org, actorOf(request.principal), {
        force: request.query.force ?? false,
        dryRun: request.query.dryRun ?? false,
        uploadId: request.query.uploadId,
      })
    },
  )
}

/** A package is read only as its own bytes: another (or no) content type, or a transfer encoding on top, is a 415. */
function refuseNonPackage(headers: { 'content-type'?: string; 'content-encoding'?: string }): void {
  const type = headers['content-type']?.split(';')[0]!.trim().toLowerCase()
  const encoding = headers['content-encoding']?.trim().toLowerCase()
  if (type === undefined || !PACKAGE_TYPES.includes(type) || (encoding !== undefined && encoding !== 'identity')) throw unsupportedMediaType(PACKAGE_TYPES)
}
