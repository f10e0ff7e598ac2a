import type { Actor } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import type { Config } from '../../config/schema.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import { DomainError, invalidField } from '../../errors/domain-error.ts'
import { newId } from '../../ids.ts'
import type { OrgId } from '../../ids.ts'
import { createGuardedFetch } from '../../http/outbound-fetch.ts'
import type { AiConfig, AiProviderConfig, AiTierConfig } from './config.ts'
import { AiNotConfigured } from './errors.ts'
import { summariseSite } from './grounding.ts'
import type { GroundingSources } from './grounding.ts'
import { admitRequest, readTierLoad, utcDay } from './limits.ts'
import { loadAiConfig } from './load-config.ts'
import { prepareChatRequest } from './prepare.ts'
import { createOpenAiProvider } from './provider.ts'
import type { AiLogger, AiProvider, ChatRequest, ChatStreamEvent, TokenUsage } from './provider.ts'
import { totalRedactions } from './redact.ts'
import type { CompleteInput, Completion, Grounding, Redactions, Usage, UsageQueryInput, UsageReport } from './schemas.ts'
import type { SseStreamResult } from './sse.ts'
import { finishUsage, summariseUsageByDay } from './store.ts'
import { chooseTarget } from './target.ts'

const DAY_MS = 86_400_000
const MAX_REPORT_DAYS = 366

/** One admitted request: where it goes, what is sent, and its usage row. */
export interface AiTicket {
  readonly usageId: string
  readonly tier: AiTierConfig
  readonly provider: AiProvider
  readonly request: ChatRequest
  readonly redactions: Redactions
  readonly grounding: Grounding
}

type DoneEvent = Extract<ChatStreamEvent, { type: 'done' }>

// About four characters a token for English text: only used when the provider reports no usage.
function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4)
}

function usageOf(ticket: AiTicket, reported: TokenUsage | undefined, completionChars: number): Usage {
  if (reported) return { ...reported, isEstimated: false }
  const promptTokens = estimateTokens(ticket.request.messages.reduce((sum, m) => sum + m.content.length, 0))
  const completionTokens = estimateTokens(completionChars)
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, isEstimated: true }
}

function errorCodeOf(error: unknown): string {
  return error instanceof DomainError ? error.code : 'InternalError'
}

function parseDay(value: string, pointer: string): number {
  const ms = Date.parse(`${value}T00:00:00.000Z`)
  if (!Number.isFinite(ms) || utcDay(ms) !== value) throw invalidField(pointer, 'is not a calendar day (YYYY-MM-DD)', 'query')
  return ms
}

export function createAiService(deps: { config: Config; handle: DatabaseHandle; clock: Clock; grounding: GroundingSources; log: AiLogger }) {
  const { handle, clock } = deps
  const db = handle.db
  const aiConfig: AiConfig | undefined = loadAiConfig(deps.config)
  // Every provider call goes through the SSRF guard: internal addresses (literal or as DNS answers, pinned for the
  // connect) are refused unless the provider says `allowPrivateNetwork`.
  const guarded = (p: AiProviderConfig) =>
    createGuardedFetch({
      allowPrivateNetwork: p.allowPrivateNetwork === true,
      onRefused: (error) => deps.log.warn?.({ provider: p.name, host: error.host, address: error.address }, 'AI provider call refused: internal address'),
    })
  const providers = new Map((aiConfig?.providers ?? []).map((p) => [p.name, createOpenAiProvider(p, { log: deps.log, fetch: guarded(p) })]))

  async function settle(orgId: OrgId, ticket: AiTicket, outcome: { status: 'ok' | 'failed' | 'cancelled'; model?: string; usage: Usage; errorCode?: string }) {
    await finishUsage(db, orgId, ticket.usageId, {
      status: outcome.status,
      model: outcome.model ?? ticket.request.model,
      prompt_tokens: outcome.usage.promptTokens,
      completion_tokens: outcome.usage.completionTokens,
      total_tokens: outcome.usage.totalTokens,
      is_estimated: outcome.usage.isEstimated ? 1 : 0,
      error_code: outcome.errorCode ?? null,
      finished_at: clock.now(),
    })
  }

  /** A request that got no answer: when the client left, the prompt (estimated) is counted as used. */
  async function recordFailure(orgId: OrgId, ticket: AiTicket, error: unknown, isClientGone: boolean): Promise<void> {
    const usage = isClientGone ? usageOf(ticket, undefined, 0) : { promptTokens: 0, completionTokens: 0, totalTokens: 0, isEstimated: false }
    await settle(orgId, ticket, { status: isClientGone ? 'cancelled' : 'failed', usage, errorCode: errorCodeOf(error) })
  }

  function toCompletion(ticket: AiTicket, answer: { text: string; model: string; finishReason: string }, usage: Usage): Completion {
    return {
      text: answer.text,
      model: answer.model,
      tier: ticket.tier.name,
      finishReason: answer.finishReason,
      usage,
      redactions: ticket.redactions,
      grounding: ticket.grounding,
    }
  }

  return {
    isConfigured: aiConfig !== undefined,

    /**
     * Checks a request, builds what goes to the provider (grounded, redacted) and admits it against the tier's
     * limits, recording it as pending. Throws ValidationFailed, AiNotConfigured, AiTierUnknown,
     * AiModelNotAllowed, NotFound (siteId) or RateLimited. Never calls the provider.
     */
    async admit(orgId: OrgId, actor: Actor, input: CompleteInput): Promise<AiTicket> {
      if (input.prompt === null || input.prompt.trim() === '') throw invalidField('/prompt', 'is required and must not be empty')
      if (aiConfig === undefined) throw new AiNotConfigured()
      const target = chooseTarget(aiConfig, input)
      const ceiling = target.tier.maxTokensCeiling
      if (input.maxTokens !== undefined && input.maxTokens !== null && input.maxTokens > ceiling) {
        throw invalidField('/maxTokens', `must be at most ${ceiling} for tier ${target.tier.name}`)
      }
      const site = input.siteId === undefined ? undefined : await summariseSite(deps.grounding, orgId, input.siteId, input.prompt ?? '')
      const systemPrompt = [input.systemPrompt ?? '', site?.text ?? ''].filter((part) => part !== '').join('\n\n')
      const prepared = prepareChatRequest({ prompt: input.prompt, systemPrompt }, target, aiConfig.redaction)
      const redactions = { ...prepared.redactions, total: totalRedactions(prepared.redactions) }
      const provider = providers.get(target.provider.name)
      if (provider === undefined) throw new Error(`AI provider ${target.provider.name} has no client`)
      const now = clock.now()
      const usageId = newId('aiu', now)
      await admitRequest(db, handle.dialect, orgId, target.tier, {
        org_id: orgId,
        id: usageId,
        at: now,
        day: utcDay(now),
        tier: target.tier.name,
        provider: target.provider.name,
        model: target.model,
        actor_kind: actor.kind,
        actor_id: actor.subject,
        status: 'pending',
        is_stream: input.stream === true ? 1 : 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        total_tokens: 0,
        is_estimated: 0,
        redactions: redactions.total,
        site_code: input.siteId ?? null,
        error_code: null,
        finished_at: null,
      })
      return { usageId, tier: target.tier, provider, request: prepared.request, redactions, grounding: site?.grounding ?? null }
    },

    /** One answer from the provider, with its usage recorded. Provider failures are recorded, then rethrown. */
    async complete(orgId: OrgId, ticket: AiTicket, signal: AbortSignal): Promise<Completion> {
      let answer
      try {
        answer = await ticket.provider.complete(ticket.request, signal)
      } catch (error) {
        await recordFailure(orgId, ticket, error, signal.aborted)
        throw error
      }
      const usage = usageOf(ticket, answer.usage, answer.text.length)
      await settle(orgId, ticket, { status: 'ok', model: answer.model, usage })
      return toCompletion(ticket, answer, usage)
    },

    stream(ticket: AiTicket, signal: AbortSignal): AsyncIterable<ChatStreamEvent> {
      return ticket.provider.stream(ticket.request, signal)
    },

    /** The data of the SSE `done` event: the same fields as a non-streamed answer, without the text. */
    doneData(ticket: AiTicket, done: DoneEvent, completionChars: number): Omit<Completion, 'text'> {
      const { text: _text, ...rest } = toCompletion(
        ticket,
        { text: '', model: done.model, finishReason: done.finishReason },
        usageOf(ticket, done.usage, completionChars),
      )
      return rest
    },

    /** Records how a stream ended: finished, failed mid-way, or left by the client (usage estimated when unknown). */
    async recordStream(orgId: OrgId, ticket: AiTicket, result: SseStreamResult): Promise<void> {
      const usage = usageOf(ticket, result.done?.usage, result.completionChars)
      if (result.done) return settle(orgId, ticket, { status: 'ok', model: result.done.model, usage })
      if (result.isClientGone) return settle(orgId, ticket, { status: 'cancelled', usage })
      return settle(orgId, ticket, { status: 'failed', usage, errorCode: errorCodeOf(result.error) })
    },

    recordFailure,

    /** Usage per UTC day and tier (at most 366 days), and each tier's limits with the current load. */
    async usage(orgId: OrgId, query: UsageQueryInput): Promise<UsageReport> {
      const now = clock.now()
      const to = query.to ?? utcDay(now)
      const toMs = parseDay(to, '/to')
      const from = query.from ?? utcDay(toMs - 29 * DAY_MS)
      const fromMs = parseDay(from, '/from')
      if (fromMs > toMs) throw invalidField('/from', 'must not be after `to`', 'query')
      if ((toMs - fromMs) / DAY_MS >= MAX_REPORT_DAYS) throw invalidField('/from', `must be at most ${MAX_REPORT_DAYS} days before \`to\``, 'query')
      const rows = await summariseUsageByDay(db, orgId, from, to)
      const tiers = await Promise.all(
        (aiConfig?.tiers ?? []).map(async (tier) => {
          const load = await readTierLoad(db, orgId, tier.name, now)
          return { tier: tier.name, requestsPerMinute: tier.requestsPerMinute, tokensPerDay: tier.tokensPerDay, ...load }
        }),
      )
      return {
        from,
        to,
        tiers,
        days: rows.map((r) => ({
          day: r.day,
          tier: r.tier,
          requests: Number(r.requests),
          failedRequests: Number(r.failed),
          promptTokens: Number(r.prompt_tokens),
          completionTokens: Number(r.completion_tokens),
          totalTokens: Number(r.total_tokens),
        })),
      }
    },
  }
}

export type AiService = ReturnType<typeof createAiService>
