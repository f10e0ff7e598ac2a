import type { FastifyBaseLogger, FastifyReply } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { actorOf } from '../../auth/principal.ts'
import { DomainError } from '../../errors/domain-error.ts'
import { problemResponses } from '../../http/problem.ts'
import { HttpFailure } from './call.ts'
import { AiClientGone, AiLimitExceeded, AiProviderUnavailable, isAiError } from './errors.ts'
import { CompleteBody, CompletionSchema, UsageQuery, UsageReportSchema } from './schemas.ts'
import type { AiService } from './service.ts'
import { clientGoneSignal, sendSseStream } from './sse.ts'

const COMPLETE_NOTE = [
  'Policy: members and above (cloud: organisation role; site server: site role).',
  'Limits per organisation and tier: `requestsPerMinute` (rolling minute) and `tokensPerDay` (UTC day); 429 `RateLimited` with `Retry-After`.',
  'Prompts bound for a provider that is not `trusted` are redacted first (IP addresses, CIP routes, `csk_` keys, PIN-like digit runs); `redactions` counts them.',
  '`stream: true` answers `text/event-stream`: `event: delta` `{text}` as the model writes, then `event: done` (model, tier, finishReason, usage, redactions, grounding) or `event: error` `{code, status, message}`. A failure before the first event is an ordinary problem response.',
  'Provider failures: 502 `AiProviderError`, 503 `AiProviderUnavailable` (with `Retry-After` when known), 504 `AiProviderTimeout`; the provider\'s own text is never returned. 503 `AiNotConfigured` when the server has no AI configuration.',
  'Prompts and completions are not logged and not stored; only the token usage is. The one exception is asked for by the client: with `Idempotency-Key` (not with `stream: true`), the answer is kept sealed for 24 hours so that a retry replays it instead of asking the model again.',
].join(' ')

/** Retry-After for limits and provider back-off; the provider's detail (`cause`) goes to the debug log only. */
function beforeProblem(reply: FastifyReply, log: FastifyBaseLogger, error: unknown): void {
  if (error instanceof AiLimitExceeded || (error instanceof AiProviderUnavailable && error.retryAfterSeconds !== undefined)) {
    reply.header('retry-after', String(error.retryAfterSeconds))
  }
  if (isAiError(error) && error.cause !== undefined) {
    const cause = error.cause
    log.debug({
      code: error.code, provider: 'provider' in error ? error.provider : undefined,
      cause: cause instanceof HttpFailure ? { status: cause.status, body: cause.body } : String(cause),
    }, 'AI provider call failed')
  }
}

export const aiRoutes: FastifyPluginAsyncTypebox<{ ai: AiService }> = async (app, { ai }) => {
  app.post('/complete', {
    // A stream is written as it arrives and cannot be replayed, so a key with `stream: true` is refused.
    config: { policy: 'member', idempotent: { refuse: (body) => ((body as { stream?: unknown } | undefined)?.stream === true ? 'cannot be used with `stream: true` (a stream cannot be replayed)' : undefined) } },
    schema: {
      tags: ['AI'], summary: 'Ask a language model',
      description: `Spec 4.4. \`tier\` picks a configured class of model, \`model\` one from the allow-list, neither: the default tier. \`siteId\` grounds the answer in that site (see \`grounding\`). ${COMPLETE_NOTE}`,
      body: CompleteBody,
      response: {
        200: {
          description: 'The completion; with `stream: true`, the events of the stream (see above).',
          content: {
            'application/json': { schema: CompletionSchema },
            'text/event-stream': { schema: Type.String({ description: '`event: delta`… then `event: done` or `event: error`, each with a JSON `data:` line.' }) },
          },
        },
        ...problemResponses(400, 401, 403, 404, 413, 415, 429, 502, 503, 504),
      },
    },
  }, async (request, reply) => {
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
        result = await sendSseStream(reply.raw, ai.stream(ticket, signal), {
          onStart: () => reply.hijack(),
          doneData: (done, completionChars) => ai.doneData(ticket, done, completionChars),
        })
      } catch (error) {
        await ai.recordFailure(orgId, ticket, error, false)
        throw error
      }
      if (result.error !== undefined) beforeProblem(reply, request.log, result.error)
      // The answer has been sent (hijacked): a failure to record it can only be logged.
      await ai.recordStream(orgId, ticket, result).catch((err: unknown) => request.log.error({ err }, 'AI usage of a stream could not be recorded'))
      return reply
    } catch (error) {
      if (error instanceof DomainError) beforeProblem(reply, request.log, error)
      throw error
    }
  })

  app.get('/usage', {
    config: { policy: 'admin' },
    schema: {
      tags: ['AI'], summary: 'Read the organisation\'s AI usage',
      description: 'Requests and tokens per UTC day and tier (`from`..`to`, at most 366 days, default the last 30), and each tier\'s limits with the current load. Policy: admins and owners; members get 403.',
      querystring: UsageQuery,
      response: { 200: UsageReportSchema, ...problemResponses(400, 401, 403, 429) },
    },
  }, async (request) => ai.usage(request.principal.orgId, request.query))
}
