import type { Clock } from '../../../clock.ts'
import type { Dialect } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'
import { newId } from '../../../ids.ts'
import { LinkDiverged } from '../errors.ts'
import { applySiteRows, changeDigest, sameContent } from './apply-rows.ts'
import { isAfter, latestChange, rowKey, seedVersion, withApplyOrigin, type Change, type Cursor } from './outbox-port.ts'
import {
  deleteRow,
  ensureMark,
  findMark,
  findRow,
  findServerEpoch,
  insertConflicts,
  releaseSavepoint,
  rollbackToSavepoint,
  savepoint,
  upsertRows,
  writeMark,
  type ConflictRow,
  type Row,
} from './store.ts'
import { validateBatch, type LinkedShape } from './validate.ts'

export interface SyncDeps {
  handle: { readonly db: Db; readonly dialect: Dialect }
  clock: Clock
}

export interface PushRequest {
  orgId: string
  /** The site server pushing (the link principal's subject). */
  serverId: string
  /** Its sites (the link principal's), never the body's. */
  sites: readonly string[]
  epoch: string
  /** The cloud's mark as the site last heard it: the batch continues after it. */
  after: Cursor
  changes: readonly Change[]
}

export interface PushResult {
  mark: { epoch: string; tx: number; seq: number }
  applied: number
  skipped: number
  conflicts: number
}

/**
 * The cloud applies a site server's batch, exactly once (ARCHITECTURE.md § Fleet link): every change is checked
 * first (422, nothing written); then in one transaction the mark is checked (a restored site: 409 LinkDiverged), changes
 * at or below the mark in outbox order (tx, seq) and superseded ones (outbox/store.ts readChanges) are skipped, the site's tables are applied as they come, edits of the
 * cloud's tables under the conflict rule (the cloud wins; the loser is kept in link_conflicts), and the mark moves to
 * the batch's last change.
 */
export async function applyPush(deps: SyncDeps, req: PushRequest): Promise<PushResult> {
  const { db, dialect } = deps.handle
  const targets = await validateBatch(db, dialect, req.changes, { orgId: req.orgId, sites: req.sites, flow: 'push' })
  return db.transaction().execute(async (trx) => {
    const now = deps.clock.now()
    const enrolled = await findServerEpoch(trx, req.orgId, req.serverId)
    let mark = await findMark(trx, req.orgId, req.serverId, dialect === 'postgres')
    if (enrolled !== undefined && enrolled !== req.epoch)
      throw new LinkDiverged('epoch', { epoch: mark?.epoch ?? enrolled, tx: mark?.tx ?? 0, seq: mark?.seq ?? 0 }, req.after)
    if (!mark || mark.epoch !== req.epoch) {
      // First contact of this epoch (a new enrolment reseeded the site): its mark starts at 0.
      await ensureMark(trx, req.orgId, req.serverId, req.epoch, now)
      mark = await findMark(trx, req.orgId, req.serverId, dialect === 'postgres')
      if (!mark || mark.epoch !== req.epoch) {
        mark = { epoch: req.epoch, tx: 0, seq: 0, digest: null }
        await writeMark(trx, req.orgId, req.serverId, mark, now)
      }
    }
    const current = mark
    if (isAfter(req.after, current)) throw new LinkDiverged('ahead', current, req.after)
    if (isAfter(current, req.after)) {
      const atMark = req.changes.find((c) => c.tx === current.tx && c.seq === current.seq)
      if (!atMark) throw new LinkDiverged('behind', current, req.after)
      if (changeDigest(atMark) !== current.digest) throw new LinkDiverged('digest', current, req.after)
    }

    const fresh: Array<{ change: Change; target: LinkedShape }> = []
    for (const [i, change] of req.changes.entries()) if (isAfter(change, current)) fresh.push({ change, target: targets[i]! })
    // A superseded change moves the mark but writes nothing: the cloud holds a newer image of its row.
    const writes = fresh.filter((item) => !item.change.superseded)

    const lost = await withApplyOrigin(trx, dialect, req.serverId, async () => {
      const conflicts: ConflictRow[] = []
      let run: Array<{ change: Change; target: LinkedShape }> = []
      const flush = async () => {
        await applySiteRows(trx, req.orgId, req.serverId, run)
        run = []
      }
      for (const item of writes) {
        if (item.target.spec.direction !== 'down') {
          run.push(item)
          continue
        }
        await flush()
        const conflict = await proposeChange(trx, dialect, req, item, now)
        if (conflict) conflicts.push(conflict)
      }
      await flush()
      return conflicts
    })
    // The conflict records are the cloud's own rows (origin ''), so they travel down to the site like any cloud change.
    await insertConflicts(trx, req.orgId, lost)

    const last = fresh.at(-1)?.change
    const moved = last ? { epoch: req.epoch, tx: last.tx, seq: last.seq, digest: changeDigest(last) } : current
    if (last) await writeMark(trx, req.orgId, req.serverId, moved, now)
    return {
      mark: { epoch: moved.epoch, tx: moved.tx, seq: moved.seq },
      applied: writes.length - lost.length,
      skipped: req.changes.length - writes.length,
      conflicts: lost.length,
    }
  })
}

const SAVEPOINT = 'link_change'

/**
 * A site's change of a cloud-authoritative row, under the rule: applied unless the cloud changed that row after the
 * version the site edited (`base`, or the version the server's seed carried when later: link_seed_versions), or — for a row the site created (base null) — the cloud holds another version of
 * it that did not come from this site server. A unique or reference clash on apply is a conflict too (a savepoint
 * keeps the rest of the batch). Answers the conflict record of a change that lost.
 */
async function proposeChange(
  trx: Db,
  dialect: Dialect,
  req: PushRequest,
  item: { change: Change; target: LinkedShape },
  now: number,
): Promise<ConflictRow | undefined> {
  const { change, target } = item
  // Locked first (PostgreSQL): a cloud edit of the row committing meanwhile is then seen by the check below, never
  // overwritten by the site's version without a conflict.
  const cloudRow = await findRow(trx, target.shape, req.orgId, target.key, change.key, dialect === 'postgres')
  const record = (winning: Row | undefined | null): ConflictRow => ({
    id: newId('lcf', now),
    server_id: req.serverId,
    table_name: change.table,
    site_code: change.site,
    row_key: rowKey(change.key),
    losing_op: change.op,
    losing_row: JSON.stringify(change.row),
    losing_at: change.at,
    winning_op: winning === null ? null : winning ? 'upsert' : 'delete',
    winning_row: winning ? JSON.stringify(winning) : null,
    recorded_at: now,
    resolved_at: null,
    resolved_by: null,
    resolution: null,
  })

  // A site server never deletes its site in the cloud (that would take every record of the site with it): the delete
  // loses like any refused change, and the verdict puts the site record back on the site server.
  if (change.table === 'sites' && change.op === 'delete') return record(cloudRow)
  if (change.base !== null) {
    // A row the server's seed carried in a version after the seed's cursor: its edits are based on that version.
    const seeded = await seedVersion(trx, req.orgId, req.serverId, change.table, rowKey(change.key))
    const base = Math.max(change.base, seeded ?? 0)
    const later = await latestChange(trx, req.orgId, change.table, change.key, { afterSeq: base, notOrigin: req.serverId })
    if (later) return record(cloudRow)
  } else if (cloudRow && !sameContent(target.shape.columns, cloudRow, change.row)) {
    const others = await latestChange(trx, req.orgId, change.table, change.key, { afterSeq: 0, notOrigin: req.serverId })
    const ours = await latestChange(trx, req.orgId, change.table, change.key, { afterSeq: 0 })
    // Only this site server ever wrote the row here: it is the site's own row, edited again before its base arrived.
    if (others || !ours) return record(cloudRow)
  }

  await savepoint(trx, SAVEPOINT)
  try {
    if (change.op === 'delete') await deleteRow(trx, target.shape, req.orgId, target.key, change.key)
    else await upsertRows(trx, target.shape, req.orgId, [change.row])
    await releaseSavepoint(trx, SAVEPOINT)
    return undefined
  } catch (error) {
    if (!isClash(error)) throw error
    await rollbackToSavepoint(trx, SAVEPOINT)
    await releaseSavepoint(trx, SAVEPOINT)
    return record(cloudRow ?? null)
  }
}

/** A unique value another row holds, or a reference to a row that is gone: the change cannot stand as it is. */
export function isClash(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return (
    code === '23505' ||
    code === '23503' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    code === 'SQLITE_CONSTRAINT_FOREIGNKEY'
  )
}
