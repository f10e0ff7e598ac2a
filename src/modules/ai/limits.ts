import type { AiUsageTable, Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'
import type { AiTierConfig } from './config.ts'
import { AiLimitExceeded } from './errors.ts'
import { countRecentRequests, deleteUsage, insertUsage, sumDayTokens } from './store.ts'

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000

/** The UTC calendar day of an epoch-ms time, `YYYY-MM-DD`: the window of `tokensPerDay`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

/**
 * Admits one request against its tier's per-organisation limits and records it as `pending`, or throws
 * AiLimitExceeded (429) and leaves no row. The row is written before it is counted, each statement on its own
 * (no transaction, so nothing is held while the provider works): two racing requests both see each other, so
 * the limit is never exceeded, at worst one of them is refused too early.
 */
export async function admitRequest(db: Db, orgId: OrgId, tier: AiTierConfig, row: AiUsageTable): Promise<void> {
  const now = row.at
  const tokens = await sumDayTokens(db, orgId, tier.name, row.day)
  if (tokens >= tier.tokensPerDay) {
    const nextDay = Date.parse(`${row.day}T00:00:00.000Z`) + DAY_MS
    throw new AiLimitExceeded('tokensPerDay', tier.name, secondsUntil(nextDay, now))
  }
  await insertUsage(db, row)
  const recent = await countRecentRequests(db, orgId, tier.name, now - MINUTE_MS)
  if (recent.requests > tier.requestsPerMinute) {
    await deleteUsage(db, orgId, row.id)
    throw new AiLimitExceeded('requestsPerMinute', tier.name, secondsUntil((recent.oldest ?? now) + MINUTE_MS, now))
  }
}

function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000))
}

export interface TierLoad {
  readonly requestsLastMinute: number
  readonly tokensToday: number
}

export async function readTierLoad(db: Db, orgId: OrgId, tier: string, now: number): Promise<TierLoad> {
  const recent = await countRecentRequests(db, orgId, tier, now - MINUTE_MS)
  return { requestsLastMinute: recent.requests, tokensToday: await sumDayTokens(db, orgId, tier, utcDay(now)) }
}
