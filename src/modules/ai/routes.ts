import type { FastifyBaseLogger } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { actorOf } from '../../identity.ts'
import { DomainError } from '../../errors/domain-error.ts'
import { ServerDraining } from '../../http/errors.ts'
import { problemResponses } from '../../http/problem.ts'
import { HttpFailure } from './call.ts'
import { AiClientGone, isAiError } from './errors.ts'
import { CompleteBody, CompletionSchema, UsageQuery, UsageReportSchema } from './schemas.ts'
import type { AiService } from './service.ts'
import { clientGoneSignal, sendSseStream } from './sse.ts'
import { docs } from './docs.ts'
import { NO_STORE } from '../../http/openapi.ts'

/** The provider's detail (`cause`) of a failure goes to the debug log only (Retry-After: the error handler). */
function logProviderCause(log: FastifyBaseLogger, error: unknown): void {
  if (isAiError(error) && error.cause !== undefined) {
    const cause = error.cause
    log.debug(
      {
        code: error.code,
        provider: 'provider' in error ? error.provider : undefined,
        cause: cause instanceof HttpFailure ? { status: cause.status, body: cause.body } : String(cause),
      },
      'AI provider call failed',
    )
  }
}

export const aiRoutes: FastifyPluginAsyncTypebox<{ ai: AiService }> = async (app, { ai }) => {
  // A draining server (app.close(): SIGTERM) ends the event streams still open at once, with an `error` event (503
  // ServerDraining) and the provider call stopped: a completion can stream far longer than the shutdown grace period.
  // A client that stopped reading cannot take that event: its response is cut off instead.
  const draining = new AbortController()
  app.addHook('preClose', async () => draining.abort(new ServerDraining()))
  app.post(
    '/complete',
    {
      // A stream is written as it arrives and cannot be replayed, so a key with `stream: true` is refused.
      config: {
        policy: 'member',
        idempotent: {
          refuse: (body) =>
            (body as { stream?: unknown } | undefined)?.stream === true ? 'cannot be used with `stream: true` (a stream cannot be replayed)' : undefined,
        },
      },
      schema: {
        tags: ['AI'],
        operationId: 'completePrompt',
        summary: 'Ask a language model',
        description: docs.askLanguageModel,
        body: CompleteBody,
        response: {
          200: {
            description: 'The completion; with `stream: true`, the events of the stream (see above).',
            headers: NO_STORE,
            content: {
              'application/json': { schema: CompletionSchema },
              'text/event-stream': {
                schema: Type.String({ description: '`event: delta`… then `event: done` or `event: error`, each with a JSON `data:` line.' }),
              },
            },
          },
          ...problemResponses(400, 401, 403, 404, 413, 415, 429, 502, 503, 504),
        },
      },
    },
    async (request, reply) => {
      const orgId = request.principal.orgId
      try {
        const ticket = await ai.admit(orgId, actorOf(request.principal), request.body)
        const signal = clientGoneSignal(reply.raw)
        reply.header('cache-control', 'no-store')
        if (request.body.stream !== true) {
          try {
            return await ai.complete(orgId, ticket, signal)
          } catch (error) {
            // Nobody is left to answer; a DomainError keeps the client's departure out of the error log.
            if (signal.aborted) throw new AiClientGone()
            throw error
          }
        }
        let result
        try {
          result = await sendSseStream(reply.raw, ai.stream(ticket, AbortSignal.any([signal, draining.signal])), {
            onStart: () => reply.hijack(),
            cutOff: draining.signal,
            doneData: (done, completionChars) => ai.doneData(ticket, done, completionChars),
          })
        } catch (error) {
          await ai.recordFailure(orgId, ticket, error, false)
          throw error
        }
        if (result.error !== undefined) logProviderCause(request.log, result.error)
        // The answer has been sent (hijacked): a failure to record it can only be logged.
        await ai.recordStream(orgId, ticket, result).catch((err: unknown) => request.log.error({ err }, 'AI usage of a stream could not be recorded'))
        return reply
      } catch (error) {
        if (error instanceof DomainError) logProviderCause(request.log, error)
        throw error
      }
    },
  )

  app.get(
    '/usage',
    {
      config: { policy: 'admin' },
      schema: {
        tags: ['AI'],
        operationId: 'getAiUsage',
        summary: "Read the organisation's AI usage",
        description: docs.readAiUsage,
        querystring: UsageQuery,
        response: { 200: UsageReportSchema, ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (request) => ai.usage(request.principal.orgId, request.query),
  )
}
