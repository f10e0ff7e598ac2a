import multipart from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { TSchema } from 'typebox'
import { actorOf } from '../../identity.ts'
import { DomainError } from '../../errors/domain-error.ts'
import { problemResponses, unsupportedMediaType } from '../../http/problem.ts'
import { MultipartLimitExceeded, MultipartMalformed } from './errors.ts'
import {
  BatchPage,
  BatchParams,
  BatchSchema,
  CollisionReportSchema,
  CollisionsQuery,
  ListBatchesQuery,
  MultiSeriesBody,
  MultiSeriesSchema,
  RejectionReportSchema,
  RejectionsQuery,
  SeriesParams,
  SeriesQuerySchema,
  SeriesSchema,
  UploadForm,
} from './schemas.ts'
import type { HistorianService, UploadPart } from './service/index.ts'
import { FIELD_NAMES } from './service/form.ts'
import { docs } from './docs.ts'
import { attachment } from '../../http/openapi.ts'
import { csvCell } from './csv-cell.ts'

/** POST/GET/DELETE /api/historian/import-batches. Multipart is registered for the upload only. */
export const historianRoutes: FastifyPluginAsyncTypebox<{ historian: HistorianService; maxFileBytes: number }> = async (app, { historian, maxFileBytes }) => {
  // The upload in a scope of its own: multipart is read there alone, and the other routes read no multipart body.
  await app.register(async (upload) => {
    // `files`: one more than the two the form has, so that an unknown file part reaches the form's own check and is
    // refused 400 naming it, with nothing kept (issue 14, mass assignment); a fourth file part is the 413.
    await upload.register(multipart, {
      limits: { fileSize: maxFileBytes, files: 3, fields: FIELD_NAMES.length, parts: FIELD_NAMES.length + 2, fieldSize: 64 * 1024 },
    })
    // The upload is multipart alone: a JSON body (or any other) is refused 415 listing only what is read here.
    upload.removeContentTypeParser('application/json')

    upload.post(
      '/',
      {
        config: { policy: 'admin' },
        schema: {
          tags: ['Historian'],
          operationId: 'importHistorianBatch',
          summary: 'Import a historian export',
          description: docs.importHistorianExport,
          requestBody: { content: { 'multipart/form-data': { schema: UploadForm } } },
          response: { 200: BatchSchema, 201: BatchSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422, 429) },
        },
      },
      async (request, reply) => {
        if (!request.isMultipart()) throw unsupportedMediaType(['multipart/form-data'])
        const length = Number(request.headers['content-length'])
        const batch = await historian.importBatch(request.principal.orgId, actorOf(request.principal), uploadParts(request), {
          bytesTotal: Number.isSafeInteger(length) ? length : null,
        })
        return reply.code(batch.isDryRun ? 200 : 201).send(batch)
      },
    )
  })

  app.get(
    '/',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Historian'],
        operationId: 'listHistorianBatches',
        summary: 'List the import batches of a site',
        description: docs.listImportBatches,
        querystring: ListBatchesQuery,
        response: { 200: BatchPage, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => historian.list(request.principal.orgId, request.query),
  )

  app.get(
    '/:batchId',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Historian'],
        operationId: 'getHistorianBatch',
        summary: 'Read an import batch',
        description: docs.readImportBatch,
        params: BatchParams,
        response: { 200: BatchSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => historian.get(request.principal.orgId, request.params.batchId),
  )

  app.get(
    '/:batchId/rejections',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Historian'],
        operationId: 'getHistorianRejections',
        summary: 'Download the rejection report of a batch',
        description: docs.downloadRejectionReport,
        params: BatchParams,
        querystring: RejectionsQuery,
        response: {
          200: {
            description: 'The report: JSON, or CSV with `?as=csv`.',
            headers: attachment('{batchId}-rejections.csv'),
            content: { 'application/json': { schema: RejectionReportSchema }, 'text/csv': { schema: { type: 'string' } } },
          },
          ...problemResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const report = await historian.rejections(request.principal.orgId, request.params.batchId)
      if (request.query.as !== 'csv') return report
      const lines = ['line,column,reason', ...report.rejections.map((r) => [String(r.line), csvCell(r.column ?? ''), csvCell(r.reason)].join(','))]
      return (
        reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${report.batchId}-rejections.csv"`)
          .serializer((payload: unknown) => String(payload))
          // The CSV form bypasses the JSON response schema (its own serializer).
          .send(`${lines.join('\r\n')}\r\n` as unknown as typeof report)
      )
    },
  )

  app.get(
    '/:batchId/collisions',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Historian'],
        operationId: 'listHistorianCollisions',
        summary: 'List the collisions of a batch',
        description: docs.listCollisions,
        params: BatchParams,
        querystring: CollisionsQuery,
        response: { 200: CollisionReportSchema, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => historian.collisions(request.principal.orgId, request.params.batchId, request.query),
  )

  app.delete(
    '/:batchId',
    {
      config: { policy: 'admin' },
      schema: {
        tags: ['Historian'],
        operationId: 'deleteHistorianBatch',
        summary: 'Delete an import batch and its samples',
        description: docs.deleteImportBatch,
        params: BatchParams,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...problemResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await historian.remove(request.principal.orgId, actorOf(request.principal), request.params.batchId)
      return reply.code(204).send(null)
    },
  )
}

/** GET /api/sites/{siteId}/historian/series and POST …/series/query (many tags): JSON, or CSV streamed. */
export const historianSeriesRoutes: FastifyPluginAsyncTypebox<{ historian: HistorianService }> = async (app, { historian }) => {
  const csvOr = (description: string, schema: TSchema) => ({
    description,
    content: { 'application/json': { schema }, 'text/csv': { schema: { type: 'string' } } },
  })
  const answer = <T>(reply: FastifyReply, read: { json: T } | { csv: AsyncIterable<string> }) => {
    if ('json' in read) return read.json
    // A stream bypasses the JSON response schema: rows are written as the pages are read.
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="historian-series.csv"')
      .send(Readable.from(read.csv) as unknown as T)
  }
  app.get(
    '/:siteId/historian/series',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Historian'],
        operationId: 'getHistorianSeries',
        summary: "Read a tag's history",
        description: docs.readTagHistory,
        params: SeriesParams,
        querystring: SeriesQuerySchema,
        response: {
          200: csvOr('One page (JSON), or with format=csv every row from the cursor on.', SeriesSchema),
          ...problemResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => answer(reply, await historian.series(request.principal.orgId, request.params.siteId, request.query)),
  )

  app.post(
    '/:siteId/historian/series/query',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Historian'],
        operationId: 'queryHistorianSeries',
        summary: 'Read the history of many tags',
        description: docs.readManyTagsHistory,
        params: SeriesParams,
        body: MultiSeriesBody,
        response: {
          200: csvOr('The first page of each tag (JSON), or with format=csv every row of each.', MultiSeriesSchema),
          ...problemResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => answer(reply, await historian.seriesOfMany(request.principal.orgId, request.params.siteId, request.body)),
  )
}

async function* uploadParts(request: FastifyRequest): AsyncGenerator<UploadPart> {
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') yield { kind: 'field', name: part.fieldname, value: typeof part.value === 'string' ? part.value : String(part.value) }
      else yield { kind: 'file', name: part.fieldname, filename: part.filename, stream: malformedAsProblem(part.file) }
    }
  } catch (error) {
    throw asUploadProblem(error)
  }
}

/** A file part's bytes; the multipart parser's own failures (the body ended inside the part) become MalformedBody. */
function malformedAsProblem(file: AsyncIterable<Uint8Array> & { truncated: boolean }): Extract<UploadPart, { kind: 'file' }>['stream'] {
  return {
    get truncated() {
      return file.truncated
    },
    async *[Symbol.asyncIterator]() {
      try {
        yield* file
      } catch (error) {
        throw asUploadProblem(error)
      }
    },
  }
}

// @fastify/multipart's limits (FST_…): which one was passed.
const MULTIPART_LIMITS: Record<string, string> = { FST_PARTS_LIMIT: 'parts', FST_FILES_LIMIT: 'files', FST_FIELDS_LIMIT: 'fields' }

/**
 * The multipart parser's own failures as the upload's problems, so that the import refuses them like any other bad
 * part (a refused import leaves no trace): a passed limit is 413, and the bare Errors it throws when the body does not
 * follow its boundary ("Unexpected end of multipart data", "Malformed part header") are MalformedBody.
 */
function asUploadProblem(error: unknown): unknown {
  if (error instanceof DomainError || !(error instanceof Error)) return error
  const limit = 'code' in error && typeof error.code === 'string' ? MULTIPART_LIMITS[error.code] : undefined
  if (limit !== undefined) {
    const message = `has more ${limit} than this upload accepts (trend_csv, mapping_csv and ${FIELD_NAMES.join(', ')}, each once)`
    return new MultipartLimitExceeded(message)
  }
  if ('code' in error || 'statusCode' in error) return error
  return new MultipartMalformed(error.message)
}
