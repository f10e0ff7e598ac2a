import type { AiUsageTable, Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export function insertUsage(db: Db, row: AiUsageTable) {
  return db.insertInto('ai_usage').values(row).execute()
}

export type UsageOutcome = Pick<
  AiUsageTable,
  'status' | 'model' | 'prompt_tokens' | 'completion_tokens' | 'total_tokens' | 'is_estimated' | 'error_code' | 'finished_at'
>

export function finishUsage(db: Db, orgId: OrgId, id: string, outcome: UsageOutcome) {
  return db.updateTable('ai_usage').set(outcome).where('org_id', '=', orgId).where('id', '=', id).execute()
}

/** Requests of the tier since `since` (exclusive), in flight included, with the oldest one's time. */
export async function countRecentRequests(db: Db, orgId: OrgId, tier: string, since: number) {
  const row = await db
    .selectFrom('ai_usage')
    .select((eb) => [eb.fn.countAll<number>().as('requests'), eb.fn.min<number | null>('at').as('oldest')])
    .where('org_id', '=', orgId)
    .where('tier', '=', tier)
    .where('at', '>', since)
    .executeTakeFirstOrThrow()
  return { requests: Number(row.requests), oldest: row.oldest === null ? undefined : Number(row.oldest) }
}

export async function sumDayTokens(db: Db, orgId: OrgId, tier: string, day: string): Promise<number> {
  const row = await db
    .selectFrom('ai_usage')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('total_tokens'), eb.lit(0)).as('tokens'))
    .where('org_id', '=', orgId)
    .where('day', '=', day)
    .where('tier', '=', tier)
    .executeTakeFirstOrThrow()
  return Number(row.tokens)
}

/**
 * The tier's tokens used on the day and its requests still in flight (pending) that began after `pendingSince` (a
 * pending row older than that was left by a process that ended mid-request and holds nothing back), read in one
 * statement: under PostgreSQL's read committed each statement sees its own snapshot, so a request finishing between
 * two reads would count in neither (its tokens not yet, its pending row no longer).
 */
export async function dayUsage(db: Db, orgId: OrgId, tier: string, day: string, pendingSince: number): Promise<{ tokens: number; pending: number }> {
  const row = await db
    .selectFrom('ai_usage')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number>('total_tokens'), eb.lit(0)).as('tokens'),
      eb.fn
        .countAll<number>()
        .filterWhere((f) => f.and([f('status', '=', 'pending'), f('at', '>', pendingSince)]))
        .as('pending'),
    ])
    .where('org_id', '=', orgId)
    .where('day', '=', day)
    .where('tier', '=', tier)
    .executeTakeFirstOrThrow()
  return { tokens: Number(row.tokens), pending: Number(row.pending) }
}

/** Per day and tier, oldest day first, for `from` <= day <= `to` (ISO dates compare as text). */
export function summariseUsageByDay(db: Db, orgId: OrgId, from: string, to: string) {
  return db
    .selectFrom('ai_usage')
    .select((eb) => [
      'day',
      'tier',
      eb.fn.countAll<number>().as('requests'),
      eb.fn.sum<number>(eb.case().when('status', '=', 'failed').then(1).else(0).end()).as('failed'),
      eb.fn.sum<number>('prompt_tokens').as('prompt_tokens'),
      eb.fn.sum<number>('completion_tokens').as('completion_tokens'),
      eb.fn.sum<number>('total_tokens').as('total_tokens'),
    ])
    .where('org_id', '=', orgId)
    .where('day', '>=', from)
    .where('day', '<=', to)
    .groupBy(['day', 'tier'])
    .orderBy('day')
    .orderBy('tier')
    .execute()
}
