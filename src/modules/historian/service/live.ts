import { createHash } from 'node:crypto'
import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import type { Db, HistorianBatchesTable } from '../../../db/schema.ts'
import { withOrgScope } from '../../../db/tenant-scope.ts'
import { lockUntilCommit } from '../../../db/transaction-lock.ts'
import type { Actor } from '../../../identity.ts'
import { newId, type OrgId } from '../../../ids.ts'
import { LiveBatchTooLarge, LivePushEmpty } from '../errors.ts'
import { closeOpenBatch, findLiveAnswer, findOpenLiveBatch, insertLiveBatch } from '../store/live-store.ts'
import { insertBatch, updateBatch } from '../store/queries.ts'
import { SampleBuffer, SeriesPairs } from '../store/sample-buffer.ts'
import { createSampleWriter } from '../store/sample-writer.ts'
import { createGroupCommit } from './group-commit.ts'
import { isRefusal, type LiveItem, type LiveRefusal, type LiveSample } from './live-samples.ts'
import { createLiveTags, type EquipmentVersions, type SiteTags, type TagDirectory } from './live-tags.ts'
import { emptyLiveReport, grownBatch, lockOpenBatch, windowOf } from './open-batch.ts'

/** Bounds of a push (config `historianLive`, SITEGRID_HISTORIAN_LIVE_*). */
export interface LiveLimits {
  maxSamples: number
  /** A sample later than now + this is refused. */
  maxSkewMs: number
  /** A sample earlier than now − this is refused. */
  maxAgeMs: number
}

export interface LiveDeps {
  handle: DatabaseHandle
  clock: Clock
  sites: { require(orgId: OrgId, code: string): Promise<{ code: string }> }
  instances: TagDirectory
  /** Tells when a site's tag mappings changed (live-tags.ts). */
  versions: EquipmentVersions
  limits: LiveLimits
}

/** The answer of a push, stored with its batch id and answered again to every resend (schemas.ts LiveAnswerSchema). */
export interface LiveAnswer {
  batchKey: string
  historianBatchId: string
  received: number
  stored: number
  duplicates: number
  refused: number
  refusals: LiveRefusal[]
}

/**
 * Live samples (issue 30): a gateway's push, all of it in one transaction that also records its batch id, so a
 * resend (even 50 at once) stores nothing twice and answers what the first stored. On SQLite, pushes of an
 * organisation that arrive while its previous ones are written share the next transaction (group-commit.ts), each
 * still answered alone. The samples go into the gateway's open historian batch of the window (format `live`,
 * open-batch.ts: visible to reads on commit, closed after its window), through the import's writer, so they are the
 * same series and rows as imported ones. A sample at a series and timestamp already stored (by an import
 * or an earlier push) keeps the stored value and counts as a duplicate, as does the earlier of two samples of the
 * push at the same series and timestamp.
 */
export function createLiveIngest(deps: LiveDeps) {
  const { handle, clock, limits } = deps
  const tagsOf = createLiveTags(deps)
  // The group runs in its organisation's scope, whichever request's context started the drain.
  const commit = createGroupCommit<ScreenedPush, LiveAnswer & { replayed: boolean }>(
    (orgId, group) =>
      withOrgScope(orgId, () =>
        handle.db.transaction().execute(async (trx) => {
          const answers: Array<LiveAnswer & { replayed: boolean }> = []
          for (const p of group) answers.push(await writePush(trx, orgId, p))
          return answers
        }),
      ),
    PUSHES_PER_TRANSACTION,
  )

  /** Checks the batch size before anything is read (413, nothing stored). */
  function checkSize(count: number): void {
    if (count > limits.maxSamples) throw new LiveBatchTooLarge(count, limits.maxSamples)
  }

  /** Refuses, per sample, unknown instances and tag keys and timestamps outside the clock-skew window. */
  function screen(tags: SiteTags, items: LiveItem[], now: number): { accepted: LiveSample[]; refusals: LiveRefusal[] } {
    const accepted: LiveSample[] = []
    const refusals: LiveRefusal[] = []
    for (const item of items) {
      const reason = isRefusal(item) ? item.reason : refusalOf(item, tags, now)
      if (reason === undefined) accepted.push(item as LiveSample)
      else refusals.push({ index: item.index, reason })
    }
    return { accepted, refusals }
  }

  function refusalOf(s: LiveSample, tags: SiteTags, now: number): string | undefined {
    const mappings = tags.get(s.instanceId)
    if (mappings === undefined) return `instance '${s.instanceId}' does not exist in this site`
    if (mappings.size === 0) return `instance '${s.instanceId}' has no tag mappings: map the tag key '${s.tagKey}' first`
    if (!mappings.has(s.tagKey)) return `tag key '${s.tagKey}' is not one of instance '${s.instanceId}''s tag mappings`
    if (s.ts > now + limits.maxSkewMs)
      return `timestamp ${new Date(s.ts).toISOString()} is in the future (more than ${limits.maxSkewMs} ms ahead of the server)`
    if (s.ts < now - limits.maxAgeMs) return `timestamp ${new Date(s.ts).toISOString()} is too old (more than ${limits.maxAgeMs} ms behind the server)`
    return undefined
  }

  return {
    checkSize,

    /** Stores a push (or answers the stored answer of its batch id); `replayed` tells which. Throws NotFound (site), LiveBatchTooLarge, LivePushEmpty. */
    async push(orgId: OrgId, actor: Actor, siteCode: string, batchKey: string, items: LiveItem[]): Promise<LiveAnswer & { replayed: boolean }> {
      checkSize(items.length)
      const tags = await tagsOf(orgId, siteCode)
      if (items.length === 0) throw new LivePushEmpty()
      const now = clock.now()
      const { accepted, refusals } = screen(tags, items, now)
      const pairs = new SeriesPairs()
      const buffer = new SampleBuffer(pairs)
      for (const s of accepted) buffer.push(pairs.number(s.instanceId, s.tagKey), s.ts, s.value, s.text, s.quality)
      const duplicatesInPush = buffer.dedupe()
      const screened: ScreenedPush = { actor, siteCode, batchKey, received: items.length, buffer, duplicatesInPush, refusals, now }
      // SQLite writes one transaction at a time anyway: pushes waiting for it share the next one. PostgreSQL runs
      // pushes in parallel transactions, which measured faster than grouping them (their commit is cheap there).
      if (handle.dialect === 'sqlite') return commit(orgId, screened)
      return handle.db.transaction().execute((trx) => writePush(trx, orgId, screened))
    },
  }

  /** One push of a group, in the group's transaction. */
  async function writePush(trx: Db, orgId: OrgId, p: ScreenedPush): Promise<LiveAnswer & { replayed: boolean }> {
    const { siteCode, batchKey, buffer, now } = p
    // Resends of one batch id take turns here; the first's answer is committed before the next one looks (or, in the
    // same group, written before it in this transaction).
    await lockUntilCommit(trx, handle.dialect, `historian live ${orgId} ${siteCode} ${batchKey}`)
    const earlier = await findLiveAnswer(trx, orgId, siteCode, batchKey)
    if (earlier !== undefined) return { ...(JSON.parse(earlier) as LiveAnswer), replayed: true }
    // Then the gateway's pushes take turns on its open batch (always after a batch id's lock: no two wait on each other).
    const createdBy = `${p.actor.kind}:${p.actor.subject}`
    await lockOpenBatch(trx, handle, orgId, siteCode, createdBy)
    const open = await findOpenLiveBatch(trx, orgId, siteCode, createdBy)
    const current = open !== undefined && windowOf(open.created_at) === windowOf(now) ? open : undefined
    if (open !== undefined && current === undefined) await closeOpenBatch(trx, orgId, open.id, now)
    const row = current ?? openBatchRow(orgId, siteCode, createdBy, batchKey, now)
    const writer = createSampleWriter(handle.dialect, 'samples', { orgId, siteCode, batchId: row.id, isContended: true })
    const { attempted, written } = await writer.write(trx, buffer)
    const answer: LiveAnswer = {
      batchKey,
      historianBatchId: row.id,
      received: p.received,
      stored: written,
      duplicates: p.duplicatesInPush + attempted - written,
      refused: p.refusals.length,
      refusals: p.refusals,
    }
    // A new row goes in after its samples (no key ties them), counted: one write of it, not two.
    const grown = grownBatch(row, buffer, { batchKey, received: p.received, stored: written, refused: p.refusals.length, refusals: p.refusals }, now)
    if (row === current) await updateBatch(trx, orgId, row.id, grown)
    else await insertBatch(trx, { ...row, ...grown })
    await insertLiveBatch(trx, {
      org_id: orgId,
      site_code: siteCode,
      batch_key: batchKey,
      batch_id: row.id,
      answer: JSON.stringify(answer),
      created_at: now,
    })
    return { ...answer, replayed: false }
  }
}

/** A push screened and buffered, waiting for its group's transaction. */
interface ScreenedPush {
  actor: Actor
  siteCode: string
  batchKey: string
  received: number
  buffer: SampleBuffer
  duplicatesInPush: number
  refusals: LiveRefusal[]
  now: number
}

/** Pushes one transaction takes at most (group-commit.ts). */
const PUSHES_PER_TRANSACTION = 16

export type LiveIngest = ReturnType<typeof createLiveIngest>

/** A gateway's new open batch in a site (open-batch.ts), before the first push's samples are counted into it. */
function openBatchRow(orgId: OrgId, siteCode: string, createdBy: string, batchKey: string, now: number): HistorianBatchesTable {
  const keyHash = createHash('sha256').update(batchKey).digest('hex')
  return {
    org_id: orgId,
    site_code: siteCode,
    id: newId('bat', now),
    format: 'live',
    status: 'open',
    rows_read: 0,
    samples_stored: 0,
    rejected_count: 0,
    collision_count: 0,
    replaced_count: 0,
    bytes_read: 0,
    bytes_total: null,
    first_ts: null,
    last_ts: null,
    tags: '[]',
    report: emptyLiveReport(),
    options: '{}',
    // A push has no files: the first push's batch id stands for both (and shows as the trend file's name).
    trend_sha256: keyHash,
    mapping_sha256: keyHash,
    trend_name: batchKey,
    is_forced: 0,
    error: null,
    created_by: createdBy,
    created_at: now,
    updated_at: now,
    completed_at: null,
  }
}
