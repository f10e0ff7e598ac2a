import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Ajv } from 'ajv'
import { actorOf } from '../../identity.ts'
import { invalidField } from '../../errors/domain-error.ts'
import { parseUtf8Text } from '../../http/input-guard.ts'
import { problemResponses } from '../../http/problem.ts'
import type { BulkItem } from './bulk.ts'
import { csvToBulkItems } from './csv.ts'
import { INSTANCE_LIMITS } from './limits.ts'
import {
  BulkCsvBody,
  BulkJsonBody,
  BulkQuery,
  BulkReportSchema,
  CreateInstanceBody,
  InstancePage,
  InstanceParams,
  InstanceSchema,
  ListInstancesQuery,
  SiteScopedParams,
  UpdateInstanceBody,
} from './schemas.ts'
import type { InstancesService } from './service.ts'
import { docs } from './docs.ts'

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
  app.addContentTypeParser(['text/csv', 'application/csv'], { parseAs: 'buffer' }, parseUtf8Text)
  // The bulk body is checked line by line by the service, so that one bad line is reported rather than failing the request.
  const coercing = new Ajv({ allErrors: true, strict: false, coerceTypes: 'array', useDefaults: true })

  app.post(
    '/:siteId/instances',
    {
      config: { policy: 'admin', idempotent: true },
      schema: {
        tags: TAGS,
        operationId: 'createInstance',
        summary: 'Create an instance',
        description: docs.createInstance,
        params: SiteScopedParams,
        body: CreateInstanceBody,
        response: { 201: InstanceSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422, 429) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await instances.create(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.body)),
  )

  app.post(
    '/:siteId/instances/bulk',
    {
      config: { policy: 'admin', idempotent: true },
      validatorCompiler: ({ schema, httpPart }) => (httpPart === 'body' ? () => true : coercing.compile(schema)),
      schema: {
        tags: TAGS,
        operationId: 'upsertInstances',
        summary: 'Create or replace many instances (JSON array or CSV)',
        description: docs.bulkInstances,
        params: SiteScopedParams,
        querystring: BulkQuery,
        body: { content: { 'application/json': { schema: BulkJsonBody }, 'text/csv': { schema: BulkCsvBody } } },
        response: { 200: BulkReportSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422, 429) },
      },
    },
    async (request) => {
      // A text body is the CSV (its parser's); any type without a parser was answered 415 before (http/input-guard.ts).
      const items = typeof request.body === 'string' ? csvToBulkItems(request.body, INSTANCE_LIMITS.bulkMaxItems) : jsonItems(request.body)
      return instances.bulk(request.principal.orgId, actorOf(request.principal), request.params.siteId, items, request.query.dryRun ?? false)
    },
  )

  app.get(
    '/:siteId/instances',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'listInstances',
        summary: "List the site's instances",
        description: docs.listInstances,
        params: SiteScopedParams,
        querystring: ListInstancesQuery,
        response: { 200: InstancePage, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => instances.list(request.principal.orgId, request.params.siteId, request.query),
  )

  app.get(
    '/:siteId/instances/:instanceId',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'getInstance',
        summary: 'Read an instance',
        description: docs.readInstance,
        params: InstanceParams,
        response: { 200: InstanceSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => instances.get(request.principal.orgId, request.params.siteId, request.params.instanceId),
  )

  app.put(
    '/:siteId/instances/:instanceId',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'updateInstance',
        summary: 'Update an instance',
        description: docs.updateInstance,
        params: InstanceParams,
        body: UpdateInstanceBody,
        response: { 200: InstanceSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 422, 429) },
      },
    },
    async (request) => instances.update(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.instanceId, request.body),
  )

  app.delete(
    '/:siteId/instances/:instanceId',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'deleteInstance',
        summary: 'Delete an instance',
        description: docs.deleteInstance,
        params: InstanceParams,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await instances.remove(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.instanceId)
      return reply.code(204).send(null)
    },
  )
}
