import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import type { HistorianRetentionTable } from '../../../db/schema.ts'
import { withSystemScope } from '../../../db/tenant-scope.ts'
import type { Actor } from '../../../identity.ts'
import type { OrgId } from '../../../ids.ts'
import { startPeriodicJob } from '../../../jobs/periodic.ts'
import { recordAudit } from '../../audit/service.ts'
import {
  deleteOldestSamples,
  findRetention,
  listRetainedSites,
  oldestSample,
  saveRetentionDays,
  saveRetentionRun,
  seriesIdsOfSite,
} from '../store/retention-store.ts'

const DAY_MS = 86_400_000
/** Samples one delete statement removes at most (each statement its own short transaction). */
export const RETENTION_BATCH_ROWS = 5000
const FIRST_RUN_MS = 60_000

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/** The API shape of a site's policy and progress (schemas.ts RetentionSchema). */
function toRetention(siteCode: string, row: HistorianRetentionTable | undefined) {
  return {
    siteId: siteCode,
    retentionDays: row?.retention_days ?? null,
    lastRunAt: iso(row?.last_run_at ?? null),
    samplesDeleted: row?.last_deleted ?? 0,
    oldestKept: iso(row?.oldest_kept_ts ?? null),
  }
}

/** GET/PUT …/historian/retention: a site's retention policy (`retentionDays`, null keeps every sample) and its progress. */
export function createRetentionService(deps: {
  handle: DatabaseHandle
  clock: Clock
  sites: { require(orgId: OrgId, code: string): Promise<{ code: string }> }
}) {
  const { handle, clock, sites } = deps
  return {
    async get(orgId: OrgId, siteCode: string) {
      const site = await sites.require(orgId, siteCode)
      return toRetention(site.code, await findRetention(handle.db, orgId, site.code))
    },

    async set(orgId: OrgId, actor: Actor, siteCode: string, retentionDays: number | null) {
      const site = await sites.require(orgId, siteCode)
      return handle.db.transaction().execute(async (trx) => {
        await saveRetentionDays(trx, orgId, site.code, retentionDays, clock.now())
        await recordAudit(trx, clock, orgId, actor, { action: 'historian.retention.set', target: site.code, detail: { retentionDays } })
        return toRetention(site.code, await findRetention(trx, orgId, site.code))
      })
    },
  }
}

export type RetentionService = ReturnType<typeof createRetentionService>

export interface RetentionSweep {
  sites: number
  deleted: number
  statements: number
}

/**
 * One pass of the retention job: for every site with a policy, each series' samples older than `retentionDays`
 * before the clock's now are deleted, RETENTION_BATCH_ROWS at most a statement, each statement its own transaction
 * (imports and reads wait on none for long); then the site's progress is recorded (when, how many, the oldest sample
 * kept). Samples of any batch go, imported or live; the batches' own counters stay as imported. `orgs` narrows it
 * (tests share a database).
 */
export async function sweepHistorianRetention(
  handle: DatabaseHandle,
  clock: Clock,
  options: { batchRows?: number; orgs?: readonly string[] } = {},
): Promise<RetentionSweep> {
  const batchRows = options.batchRows ?? RETENTION_BATCH_ROWS
  return withSystemScope(async () => {
    const { db } = handle
    const summary: RetentionSweep = { sites: 0, deleted: 0, statements: 0 }
    for (const site of await listRetainedSites(db, options.orgs)) {
      const orgId = site.org_id as OrgId
      const now = clock.now()
      const cutoff = now - site.retention_days! * DAY_MS
      let deleted = 0
      let oldestKept: number | null = null
      for (const seriesId of await seriesIdsOfSite(db, orgId, site.site_code)) {
        for (;;) {
          const n = await deleteOldestSamples(db, orgId, seriesId, cutoff, batchRows)
          summary.statements++
          deleted += n
          if (n < batchRows) break
        }
        const oldest = await oldestSample(db, orgId, seriesId)
        if (oldest !== null && (oldestKept === null || oldest < oldestKept)) oldestKept = oldest
      }
      await saveRetentionRun(db, orgId, site.site_code, { at: now, deleted, oldestKept })
      summary.sites++
      summary.deleted += deleted
    }
    return summary
  })
}

/** Runs the sweep every `intervalMs` (the first a minute after the start), started with the serving process (serving-jobs.ts), stopped on close. */
export function startHistorianRetentionJob(handle: DatabaseHandle, clock: Clock, intervalMs: number, log: FastifyBaseLogger) {
  return startPeriodicJob(
    {
      job: 'historian-retention',
      firstMs: Math.min(FIRST_RUN_MS, intervalMs),
      intervalMs,
      run: () => sweepHistorianRetention(handle, clock),
      done: 'historian retention applied',
      failed: 'historian retention failed',
    },
    log,
  )
}
