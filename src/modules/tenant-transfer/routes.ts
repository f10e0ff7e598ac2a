import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import { problemResponses, unsupportedMediaType } from '../../http/problem.ts'
import type { OrgsService } from '../orgs/service.ts'
import { targetOrg } from '../orgs/target-org.ts'
import { ExportQuery, ImportQuery, ImportReportSchema, OrgSlugParams, StagedSchema } from './schemas.ts'
import type { TenantTransferService } from './service.ts'

const POLICY = 'Policy: organisation owners (cloud) or the site owner (site server); platform admins for any organisation. `{slug}` must be the host\'s organisation, else the uniform 404 (platform admins excepted).'
const PACKAGE_TYPES = ['application/gzip', 'application/octet-stream']
const FORMAT = 'The package is gzip of newline-delimited JSON records: a header (format `sitegrid-tenant-package`, `formatVersion` 1, source mode, export time, organisation, site, parts), then per part (table) its rows and a `partEnd` record with the count and SHA-256 of its lines, then an `end` record with all counts and the SHA-256 of everything before it. Rows are keyed by column name, without `org_id`. API keys travel as metadata only (no verifier): moved keys do not authenticate; mint new ones.'

export const tenantTransferRoutes: FastifyPluginAsyncTypebox<{ transfer: TenantTransferService; orgs: OrgsService }> = async (app, { transfer, orgs }) => {
  // The package body is streamed to the database as it arrives, never buffered whole.
  app.addContentTypeParser(PACKAGE_TYPES, (_request, payload, done) => done(null, payload))

  app.get('/:slug/tenant/export', {
    config: { policy: 'owner' },
    schema: {
      tags: ['Tenant transfer'], summary: 'Export the organisation (or one site) as a package', description: `${FORMAT} ${POLICY}`,
      params: OrgSlugParams, querystring: ExportQuery,
      response: { 200: { description: 'The package (application/gzip), streamed.', content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } } }, ...problemResponses(401, 403, 404, 429) },
    },
  }, async (request, reply) => {
    const org = await targetOrg(request, request.params.slug, orgs)
    const stream = await transfer.exportPackage(org, request.query.siteId ?? null)
    const name = `${org.slug}${request.query.siteId ? `-${request.query.siteId}` : ''}.sitegrid.jsonl.gz`
    return reply.type('application/gzip').header('content-disposition', `attachment; filename="${name}"`).send(stream as never) // a stream, documented above as binary
  })

  app.put('/:slug/tenant/import/package', {
    config: { policy: 'owner' },
    schema: {
      tags: ['Tenant transfer'], summary: 'Stage a package for import',
      description: `Body: the package (\`application/gzip\` or \`application/octet-stream\`), streamed. It is checked whole (format version, every count and checksum, organisation id) before anything else happens; an invalid one (truncated, corrupt gzip, a line over 16 MiB, a count or checksum off, a row with NUL or a lone surrogate or JSON text nested deeper than 64 levels) is discarded with 422 \`PackageInvalid\`. It is inflated in constant memory: past \`SITEGRID_TENANT_PACKAGE_MAX_BYTES\` gzip bytes, or \`SITEGRID_TENANT_PACKAGE_MAX_INFLATED_BYTES\` inflated, 413 \`PayloadTooLarge\` naming the limit, nothing kept. No body, another content type (\`application/json\` included) or a \`Content-Encoding\` other than \`identity\`: 415 \`UnsupportedMediaType\` listing \`acceptedTypes\`. Staging replaces an earlier staged package. ${POLICY}`,
      params: OrgSlugParams,
      response: { 200: StagedSchema, ...problemResponses(401, 403, 404, 413, 415, 422, 429) },
    },
    // Before any parser runs: the JSON parser every route inherits would otherwise hand the handler an object.
    preParsing: async (request) => { refuseNonPackage(request.headers) },
  }, async (request) => {
    const org = await targetOrg(request, request.params.slug, orgs)
    const staged = await transfer.stage(org, actorOf(request.principal), request.body as AsyncIterable<Buffer>)
    return { bytes: staged.bytes, formatVersion: staged.header.formatVersion, sourceMode: staged.header.sourceMode, exportedAt: staged.header.exportedAt, site: staged.header.site, counts: staged.counts }
  })

  app.post('/:slug/tenant/import', {
    config: { policy: 'owner' },
    schema: {
      tags: ['Tenant transfer'], summary: 'Apply the staged package',
      description: `No body (spec 4.5): applies the package staged with PUT …/tenant/import/package, in one transaction. Records identical to existing ones are left alone; without \`force\`, records that would overwrite different ones make it change nothing and answer 409 \`Conflict\` listing them (\`conflicts\`, first 100, and \`conflictCount\`); with \`force\` they are replaced. \`force\` replaces only records with the same key: a record whose unique value (a controller's asset number in its site, an open alarm's instance and condition, a bound domain, …) another record holds — one of this organisation under another key, another record of the package, or any record of another organisation — makes the import (forced, unforced or a dry run) change nothing and answer 409 \`Conflict\` with \`uniqueConflicts\` (first 100: \`part\`, \`values\` of the unique rule, the package's \`record\` key, \`heldBy\` the holder's key, null for another organisation's, and \`heldIn\`) and \`uniqueConflictCount\`; a value held by another organisation is found when the import writes, so a dry run does not report it. A row this server's table refuses (a missing value, a record it refers to that is neither in the package nor here, a value of the wrong type) is a crafted package: 422 \`PackageInvalid\` naming the part and the rule, nothing written. \`dryRun=true\` answers the counts without writing. ${POLICY}`,
      params: OrgSlugParams, querystring: ImportQuery,
      response: { 200: ImportReportSchema, ...problemResponses(401, 403, 404, 409, 422, 429) },
    },
  }, async (request) => {
    const org = await targetOrg(request, request.params.slug, orgs)
    return transfer.applyStaged(org, actorOf(request.principal), { force: request.query.force ?? false, dryRun: request.query.dryRun ?? false })
  })
}

/** A package is read only as its own bytes: another (or no) content type, or a transfer encoding on top, is a 415. */
function refuseNonPackage(headers: { 'content-type'?: string; 'content-encoding'?: string }): void {
  const type = headers['content-type']?.split(';')[0]!.trim().toLowerCase()
  const encoding = headers['content-encoding']?.trim().toLowerCase()
  if (type === undefined || !PACKAGE_TYPES.includes(type) || (encoding !== undefined && encoding !== 'identity')) throw unsupportedMediaType(PACKAGE_TYPES)
}
