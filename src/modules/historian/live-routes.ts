import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Forbidden } from '../../errors/domain-error.ts'
import { parseUtf8Text } from '../../http/input-guard.ts'
import { problemResponses } from '../../http/problem.ts'
import { actorOf } from '../../identity.ts'
import { docs } from './docs.ts'
import { LiveAnswerSchema, LiveSamplesBody, LiveSamplesQuery, RetentionBody, RetentionSchema } from './live-schemas.ts'
import { SeriesParams } from './schemas.ts'
import { createLiveIngest, type LiveDeps } from './service/live.ts'
import { countLines, readLines, readQuality, readTimestamp, type LiveItem } from './service/live-samples.ts'
import { createRetentionService } from './service/retention.ts'
import { sampleValueRule } from './sample-value.ts'

/** Bytes a pushed sample may take on average: the body limit of a push of SITEGRID_HISTORIAN_LIVE_MAX_SAMPLES. */
const BYTES_PER_SAMPLE = 512

/** POST /api/sites/{siteId}/historian/samples (gateways' live samples) and GET/PUT …/historian/retention. */
export const historianLiveRoutes: FastifyPluginAsyncTypebox<LiveDeps> = async (app, deps) => {
  const live = createLiveIngest(deps)
  const retention = createRetentionService(deps)
  const bodyLimit = deps.limits.maxSamples * BYTES_PER_SAMPLE
  // The push in a scope of its own: the line format's text types are read there alone (the retention PUT answers them 415).
  await app.register(async (scope) => {
    const push = scope.withTypeProvider<TypeBoxTypeProvider>()
    push.addContentTypeParser(['text/plain', 'text/csv'], { parseAs: 'buffer', bodyLimit }, parseUtf8Text)
    push.post(
      '/:siteId/historian/samples',
      {
        config: { policy: 'member' },
        bodyLimit,
        schema: {
          tags: ['Historian'],
          operationId: 'postHistorianSamples',
          summary: 'Push live samples (gateways)',
          description: docs.pushLiveSamples,
          params: SeriesParams,
          querystring: LiveSamplesQuery,
          body: {
            content: {
              'application/json': { schema: LiveSamplesBody },
              'text/plain': { schema: { type: 'string' } },
              'text/csv': { schema: { type: 'string' } },
            },
          },
          response: { 200: LiveAnswerSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 422, 429) },
        },
      },
      async (request) => {
        if (request.principal.kind !== 'apiKey') throw new Forbidden('Live samples are pushed by gateways with an API key.')
        const body = request.body as LiveSamplesBody | string
        // The size first: a push over the limit is refused whole before any of it is read.
        live.checkSize(typeof body === 'string' ? countLines(body) : body.samples.length)
        const items = typeof body === 'string' ? readLines(body) : body.samples.map(fromJson)
        return live.push(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.query.batchKey, items)
      },
    )
  })

  app.get(
    '/:siteId/historian/retention',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Historian'],
        operationId: 'getHistorianRetention',
        summary: "A site's sample retention and its progress",
        description: docs.readRetention,
        params: SeriesParams,
        response: { 200: RetentionSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => retention.get(request.principal.orgId, request.params.siteId),
  )

  app.put(
    '/:siteId/historian/retention',
    {
      config: { policy: 'admin' },
      schema: {
        tags: ['Historian'],
        operationId: 'setHistorianRetention',
        summary: "Set a site's sample retention",
        description: docs.setRetention,
        params: SeriesParams,
        body: RetentionBody,
        response: { 200: RetentionSchema, ...problemResponses(400, 401, 403, 404, 415, 429) },
      },
    },
    async (request) => retention.set(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.body.retentionDays),
  )
}

/** A JSON sample as the service takes it; what the schema cannot say (one of value and text, a readable time) is a refusal. */
function fromJson(s: LiveSamplesBody['samples'][number], index: number): LiveItem {
  if ((s.value === undefined) === (s.text === undefined)) return { index, reason: 'exactly one of value and text' }
  const valueRule = s.value === undefined ? undefined : sampleValueRule(s.value)
  if (valueRule !== undefined) return { index, reason: `value ${s.value} is not ${valueRule}` }
  const ts = readTimestamp(s.ts)
  if (typeof ts === 'string') return { index, reason: ts }
  const quality = readQuality(s.quality)
  if (typeof quality === 'string') return { index, reason: quality }
  return { index, instanceId: s.instanceId, tagKey: s.tagKey, ts, value: s.value ?? null, text: s.text ?? null, quality }
}
