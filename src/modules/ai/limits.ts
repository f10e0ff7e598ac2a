import type { Dialect } from '../../db/connect.ts'
import type { AiUsageTable, Db } from '../../db/schema.ts'
import { lockUntilCommit } from '../../db/transaction-lock.ts'
import type { OrgId } from '../../ids.ts'
import type { AiTierConfig } from './config.ts'
import { AiLimitExceeded } from './errors.ts'
import { countRecentRequests, dayUsage, insertUsage, sumDayTokens } from './store.ts'

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000
/** How long a pending request holds tokens back: longer, its process ended without finishing it (as an idempotency claim). */
const IN_FLIGHT_HOLD_MS = 10 * MINUTE_MS

/** The UTC calendar day of an epoch-ms time, `YYYY-MM-DD`: the window of `tokensPerDay`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

/**
 * Admits one request against its tier's per-organisation limits and records it as `pending`, or throws
 * AiLimitExceeded (429) and leaves no row. Count and insert are one short transaction that holds nothing while the
 * provider works; the admissions of one organisation and tier take turns (PostgreSQL: a transaction-level advisory
 * lock, across the processes of a cell; SQLite: its one writer), so N requests sent at once admit exactly the limit:
 * none more, and none refused while the limit has room. A request in flight holds back the tier's maxTokensCeiling
 * (the most its completion may use; its tokens are unknown until it finishes), so requests sent at once overshoot
 * tokensPerDay by about one request's size, as one at a time do, not by one request's size each.
 */
export async function admitRequest(db: Db, dialect: Dialect, orgId: OrgId, tier: AiTierConfig, row: AiUsageTable): Promise<void> {
  const now = row.at
  await db.transaction().execute(async (trx) => {
    await lockUntilCommit(trx, dialect, `ai ${orgId} ${tier.name}`)
    const { tokens, pending: inFlight } = await dayUsage(trx, orgId, tier.name, row.day, now - IN_FLIGHT_HOLD_MS)
    if (tokens >= tier.tokensPerDay) {
      const nextDay = Date.parse(`${row.day}T00:00:00.000Z`) + DAY_MS
      throw new AiLimitExceeded('tokensPerDay', tier.name, secondsUntil(nextDay, now))
    }
    // The day has room, held back by requests in flight: it frees up (or is used) as they finish.
    if (tokens + inFlight * tier.maxTokensCeiling >= tier.tokensPerDay) throw new AiLimitExceeded('tokensPerDay', tier.name, 1)
    const recent = await countRecentRequests(trx, orgId, tier.name, now - MINUTE_MS)
    if (recent.requests >= tier.requestsPerMinute) {
      throw new AiLimitExceeded('requestsPerMinute', tier.name, secondsUntil((recent.oldest ?? now) + MINUTE_MS, now))
    }
    await insertUsage(trx, row)
  })
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
