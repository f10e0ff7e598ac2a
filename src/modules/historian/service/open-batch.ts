import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import type { Db, HistorianBatchesTable } from '../../../db/schema.ts'
import { withOrgScope, withSystemScope } from '../../../db/tenant-scope.ts'
import { lockUntilCommit } from '../../../db/transaction-lock.ts'
import type { OrgId } from '../../../ids.ts'
import { startPeriodicJob } from '../../../jobs/periodic.ts'
import { closeOpenBatch, listOpenBatchesBefore } from '../store/live-store.ts'
import type { SampleBuffer } from '../store/sample-buffer.ts'
import { readReport, type BatchReport, type TagCoverage } from './batch-view.ts'

/**
 * A gateway's live pushes (issue 30) go into one historian batch per gateway (its API key), site and window: UTC
 * windows of LIVE_WINDOW_MS from the epoch (:00, :10, :20 … of every hour). The batch is `open` while its window lasts:
 * reads see its samples at once, the list shows its counts and coverage growing, and the fleet link leaves it alone
 * (its triggers record no `open` row, its chunk streamer refuses one). The first push of the gateway after the window
 * closes it (`complete`) and opens the next; the close job closes the ones no push followed, so a batch stays open
 * at most until CLOSE_JOB_INTERVAL_MS after its window ends while a server runs.
 */
export const LIVE_WINDOW_MS = 10 * 60_000

/** How often the close job looks for open batches whose window ended (the first run CLOSE_JOB_FIRST_MS after the start). */
export const CLOSE_JOB_INTERVAL_MS = 60_000
const CLOSE_JOB_FIRST_MS = 5_000

/** The start of the window `ms` lies in. */
export const windowOf = (ms: number) => ms - (((ms % LIVE_WINDOW_MS) + LIVE_WINDOW_MS) % LIVE_WINDOW_MS)

/**
 * The lock the writers of a gateway's open batch in a site take, held until their transaction ends: its pushes, the
 * close job and a delete of the batch take turns, so no count is lost and no push writes into a batch just closed.
 */
export function lockOpenBatch(trx: Db, handle: DatabaseHandle, orgId: OrgId, siteCode: string, createdBy: string): Promise<void> {
  return lockUntilCommit(trx, handle.dialect, `historian live open ${orgId} ${siteCode} ${createdBy}`)
}

/** Refusals the batch row lists (its rejection report), over all its pushes; each answer lists all of its own. */
const REFUSALS_LISTED = 100

/** What one push adds to its batch: the counts of its answer, its samples, its refusals. */
export interface PushOutcome {
  batchKey: string
  received: number
  stored: number
  refused: number
  refusals: ReadonlyArray<{ index: number; reason: string }>
}

/**
 * The batch row's changes once a push's samples are written into it: counters added, coverage (what delete and the
 * fleet link go by) and time range widened, the push's refusals listed after the earlier ones (each named by its
 * push's batch key, its line the sample's index + 1). The accounting of a batch holds over its pushes: valuesRead =
 * samplesStored + collisions + rowsRejected + duplicatesInFile.
 */
export function grownBatch(row: HistorianBatchesTable, buffer: SampleBuffer, push: PushOutcome, now: number): Partial<HistorianBatchesTable> {
  const coverage = new Map<string, TagCoverage>()
  for (const c of JSON.parse(row.tags) as TagCoverage[]) coverage.set(`${c.instanceId}\u0000${c.tagKey}`, c)
  const ofPair: Array<TagCoverage | undefined> = []
  for (let i = 0; i < buffer.length; i++) {
    const pair = buffer.pair[i]!
    const ts = buffer.ts[i]!
    let c = ofPair[pair]
    if (c === undefined) {
      const { instanceId, tagKey } = buffer.pairs.list[pair]!
      const key = `${instanceId}\u0000${tagKey}`
      c = coverage.get(key)
      if (c === undefined) coverage.set(key, (c = { historianTag: tagKey, instanceId, tagKey, unit: null, scale: 1, samples: 0, firstTs: ts, lastTs: ts }))
      ofPair[pair] = c
    }
    c.samples++
    if (ts < c.firstTs!) c.firstTs = ts
    if (ts > c.lastTs!) c.lastTs = ts
  }
  const tags = [...coverage.values()]
  const report = readReport(row.report)
  const room = REFUSALS_LISTED - report.rejections.length
  if (room > 0) report.rejections.push(...push.refusals.slice(0, room).map((r) => ({ line: r.index + 1, reason: `push ${push.batchKey}: ${r.reason}` })))
  const collisions = buffer.length - push.stored
  report.valuesRead = (report.valuesRead ?? 0) + push.received
  report.duplicatesInFile = (report.duplicatesInFile ?? 0) + (push.received - push.refused - buffer.length)
  return {
    rows_read: row.rows_read + push.received,
    samples_stored: row.samples_stored + push.stored,
    rejected_count: row.rejected_count + push.refused,
    collision_count: row.collision_count + collisions,
    first_ts: tags.length === 0 ? null : Math.min(...tags.map((t) => t.firstTs!)),
    last_ts: tags.length === 0 ? null : Math.max(...tags.map((t) => t.lastTs!)),
    tags: JSON.stringify(tags),
    report: JSON.stringify(report),
    updated_at: now,
  }
}

/** The report of a batch no push has written into yet. */
export function emptyLiveReport(): string {
  const report: BatchReport = {
    separator: null,
    timezone: 'UTC',
    rejections: [],
    unmappedTags: [],
    emptyCells: 0,
    sentinelCells: 0,
    valuesRead: 0,
    duplicatesInFile: 0,
    forcedOver: null,
    collisions: [],
  }
  return JSON.stringify(report)
}

export interface CloseSweep {
  closed: number
}

/**
 * One pass of the close job: every open batch whose window ended before now is closed, each in a transaction of its
 * own under its gateway's lock (a push that closed it meanwhile leaves nothing to do). `orgs` narrows it (tests
 * share a database).
 */
export async function closeEndedLiveBatches(handle: DatabaseHandle, clock: Clock, options: { orgs?: readonly string[] } = {}): Promise<CloseSweep> {
  const now = clock.now()
  const ended = await withSystemScope(() => listOpenBatchesBefore(handle.db, windowOf(now), options.orgs))
  let closed = 0
  for (const b of ended) {
    const orgId = b.org_id as OrgId
    const isClosed = await withOrgScope(orgId, () =>
      handle.db.transaction().execute(async (trx) => {
        await lockOpenBatch(trx, handle, orgId, b.site_code, b.created_by)
        return closeOpenBatch(trx, orgId, b.id, clock.now())
      }),
    )
    if (isClosed) closed++
  }
  return { closed }
}

/** Runs the close pass every CLOSE_JOB_INTERVAL_MS, started with the serving process (serving-jobs.ts), stopped on close. */
export function startLiveBatchCloseJob(handle: DatabaseHandle, clock: Clock, log: FastifyBaseLogger) {
  return startPeriodicJob(
    {
      job: 'historian-live-close',
      firstMs: CLOSE_JOB_FIRST_MS,
      intervalMs: CLOSE_JOB_INTERVAL_MS,
      run: () => closeEndedLiveBatches(handle, clock),
      done: 'historian open live batches closed',
      failed: 'historian open live batches: closing failed',
      isIdle: (summary) => (summary as CloseSweep).closed === 0,
    },
    log,
  )
}
