import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Ajv } from 'ajv'
import { actorOf } from '../../identity.ts'
import { invalidField } from '../../errors/domain-error.ts'
import { problemResponses } from '../../http/problem.ts'
import type { BulkItem } from './bulk.ts'
import { csvToBulkItems } from './csv.ts'
import { INSTANCE_LIMITS } from './limits.ts'
import {
  BulkCsvBody, BulkJsonBody, BulkQuery, BulkReportSchema, CreateInstanceBody, InstancePage, InstanceParams, InstanceSchema, ListInstancesQuery,
  SiteScopedParams, UpdateInstanceBody,
} from './schemas.ts'
import type { InstancesService } from './service.ts'

const READ = 'Policy: members read (cloud: organisation role; site server: site role). A site or instance of another organisation or another site is the uniform 404.'
const WRITE = 'Policy: admins and owners (cloud: organisation role; site server: site role); members get 403. A site or instance of another organisation or another site is the uniform 404.'
const TAGS = ['Instances']

function jsonItems(body: unknown): BulkItem[] {
  if (!Array.isArray(body)) throw invalidField('', 'must be a JSON array of instances (or send text/csv)')
  if (body.length > INSTANCE_LIMITS.bulkMaxItems) throw invalidField('', `must have at most ${INSTANCE_LIMITS.bulkMaxItems} items`)
  return body.map((value: unknown, i) => {
    const id = (value as { id?: unknown } | null)?.id
    return { line: i + 1, at: `/${i}`, id: typeof id === 'string' ? id : null, value }
  })
}

export const instancesRoutes: FastifyPluginAsyncTypebox<{ instances: InstancesService }> = async (app, { instances }) => {
  app.addContentTypeParser(['text/csv', 'application/csv'], { parseAs: 'string' }, (_request, body, done) => done(null, body))
  // The bulk body is checked line by line by the service, so that one bad line is reported rather than failing the request.
  const coercing = new Ajv({ allErrors: true, strict: false, coerceTypes: 'array', useDefaults: true })

  app.post('/:siteId/instances', {
    config: { policy: 'admin', idempotent: true },
    schema: {
      tags: TAGS, summary: 'Create an instance',
      description: `Spec 2.4. \`id\` is given by the caller and unique in the site (409 \`Conflict\`); \`controllerId\` must name a controller of the same site (422 \`UnprocessableEntity\` naming \`/controllerId\`). ${WRITE}`,
      params: SiteScopedParams, body: CreateInstanceBody, response: { 201: InstanceSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422, 429) },
    },
  }, async (request, reply) => reply.code(201).send(await instances.create(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.body)))

  app.post('/:siteId/instances/bulk', {
    config: { policy: 'admin', idempotent: true },
    validatorCompiler: ({ schema, httpPart }) => (httpPart === 'body' ? () => true : coercing.compile(schema)),
    schema: {
      tags: TAGS, summary: 'Create or replace many instances (JSON array or CSV)',
      description: `Each line is an instance body (spec 2.4) checked like \`POST …/instances\`; a line whose id exists replaces that instance whole (absent optional fields are cleared), `
        + `one identical to the stored instance is \`unchanged\`. With \`dryRun=true\` nothing is written and the 200 report says what would be created, updated, left unchanged and refused (by line). `
        + `Otherwise all or nothing: any refused line answers 422 \`UnprocessableEntity\` with the report in \`report\` and each problem in \`errors\` (pointer \`/INDEX/field\` for JSON, \`/line/N/field\` for CSV), and nothing is written. `
        + `At most ${INSTANCE_LIMITS.bulkMaxItems} lines, within the body size limit. Batches sent at once that name the same new ids all apply: one creates them, the others are planned again on what it left (replaced or \`unchanged\`); only a site that keeps changing under a batch answers 409 \`Conflict\` (nothing written; retry). ${WRITE}`,
      params: SiteScopedParams, querystring: BulkQuery,
      body: { content: { 'application/json': { schema: BulkJsonBody }, 'text/csv': { schema: BulkCsvBody } } },
      response: { 200: BulkReportSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422, 429) },
    },
  }, async (request) => {
    // A text body is the CSV (its parser's); any type without a parser was answered 415 before (http/input-guard.ts).
    const items = typeof request.body === 'string' ? csvToBulkItems(request.body, INSTANCE_LIMITS.bulkMaxItems) : jsonItems(request.body)
    return instances.bulk(request.principal.orgId, actorOf(request.principal), request.params.siteId, items, request.query.dryRun ?? false)
  })

  app.get('/:siteId/instances', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'List the site\'s instances', description: `Paged, ordered by id; filters \`controllerId\`, \`area\`, \`typeId\` (exact matches, combined with AND). ${READ}`,
      params: SiteScopedParams, querystring: ListInstancesQuery, response: { 200: InstancePage, ...problemResponses(400, 401, 403, 404, 429) },
    },
  }, async (request) => instances.list(request.principal.orgId, request.params.siteId, request.query))

  app.get('/:siteId/instances/:instanceId', {
    config: { policy: 'member' },
    schema: { tags: TAGS, summary: 'Read an instance', description: READ, params: InstanceParams, response: { 200: InstanceSchema, ...problemResponses(401, 403, 404, 429) } },
  }, async (request) => instances.get(request.principal.orgId, request.params.siteId, request.params.instanceId))

  app.put('/:siteId/instances/:instanceId', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Update an instance',
      description: `All fields optional (\`id\` is fixed): an absent field is left as it is, a null clears \`typeVersion\` or \`area\`; \`tagMappings\` and \`config\` are replaced whole. A \`controllerId\` not of this site is 422. ${WRITE}`,
      params: InstanceParams, body: UpdateInstanceBody, response: { 200: InstanceSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 422, 429) },
    },
  }, async (request) => instances.update(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.instanceId, request.body))

  app.delete('/:siteId/instances/:instanceId', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Delete an instance', description: WRITE,
      params: InstanceParams, response: { 204: { type: 'null', description: 'Deleted.' }, ...problemResponses(401, 403, 404, 429) },
    },
  }, async (request, reply) => {
    await instances.remove(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.instanceId)
    return reply.code(204).send(null)
  })
}
