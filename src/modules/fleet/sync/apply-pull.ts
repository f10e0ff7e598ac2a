import { sql } from 'kysely'
import type { Dialect } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'
import type { TableShape } from '../../tenant-transfer/introspect.ts'
import type { SyncDeps } from './apply-push.ts'
import { isAfter, LINKED_TABLES, rowKey, withApplyOrigin, type Change, type Cursor } from './outbox-port.ts'
import {
  deleteRow,
  deleteUniqueHolders,
  dropBase,
  ensureMark,
  findMark,
  releaseSavepoint,
  rollbackToSavepoint,
  savepoint,
  setBase,
  upsertRows,
  writeMark,
} from './store.ts'
import { shapeOf, uniqueKeysOf, validateBatch, type LinkedShape } from './validate.ts'

/** The peer name a site server keeps its mark of the cloud's changes under (link_marks.peer). */
export const CLOUD_PEER = 'cloud'

export interface PullApplyRequest {
  orgId: string
  /** This site server's id (link_peer.server_id): the conflict records of its own changes carry the cloud's verdict. */
  serverId: string
  /** This site server's sites (link_peer.sites). */
  sites: readonly string[]
  /** This site server's epoch (link_peer.epoch), kept with the mark. */
  epoch: string
  changes: readonly Change[]
  /** The pull answer's `next`: the mark moves there when it lies beyond the last change. */
  next?: Cursor
}

export interface PullApplyResult {
  mark: Cursor
  applied: number
  skipped: number
}

const SAVEPOINT = 'link_pull_change'

/**
 * One cloud change, as it comes. The cloud wins here too: a site row that holds one of its unique values under
 * another key (a site change the cloud has not seen or will refuse) gives way, and the write is tried again.
 */
async function applyCloudChange(db: Db, trx: Db, dialect: Dialect, orgId: string, item: { change: Change; target: LinkedShape }): Promise<void> {
  const { change, target } = item
  if (change.op === 'delete') await deleteRow(trx, target.shape, orgId, target.key, change.key)
  else await upsertWinning(db, trx, dialect, orgId, target.shape, change.row)
}

/**
 * Tables both sides write, each its own part: a forwarded command is the cloud's while pending and the site's once
 * settled, so a cloud image (a republished pending command) never takes a settled one back to pending.
 */
const SITE_SETTLES: Readonly<Record<string, { column: string; value: string }>> = { link_commands: { column: 'status', value: 'pending' } }

async function upsertWinning(db: Db, trx: Db, dialect: Dialect, orgId: string, shape: TableShape, row: Record<string, unknown>): Promise<void> {
  const settles = SITE_SETTLES[shape.name]
  const guard = settles ? { replaceWhile: settles } : {}
  await savepoint(trx, SAVEPOINT)
  try {
    await upsertRows(trx, shape, orgId, [row], guard)
    await releaseSavepoint(trx, SAVEPOINT)
    return
  } catch (error) {
    if (!isUniqueClash(error)) throw error
    await rollbackToSavepoint(trx, SAVEPOINT)
    await releaseSavepoint(trx, SAVEPOINT)
  }
  await deleteUniqueHolders(trx, shape, orgId, row, await uniqueKeysOf(db, dialect, shape.name, trx))
  await upsertRows(trx, shape, orgId, [row], guard)
}

function isUniqueClash(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505'
}

/**
 * A conflict the cloud recorded against one of this site server's changes, still open: the site's row becomes the
 * cloud's version (or goes, where the cloud has none). The cloud's later changes would bring most versions anyway;
 * this settles the ones they never would: a change refused for a unique value or a missing reference leaves no cloud
 * change behind, and the site must not keep a row the cloud refused.
 */
async function applyVerdict(db: Db, trx: Db, dialect: Dialect, req: PullApplyRequest, conflict: Record<string, unknown>): Promise<void> {
  if (conflict.server_id !== req.serverId || conflict.resolution !== null) return
  const table = String(conflict.table_name)
  const spec = LINKED_TABLES.find((t) => t.name === table)
  if (spec?.direction !== 'down' || table === 'link_conflicts') return
  const shape = await shapeOf(db, dialect, table, trx)
  if (!shape) return
  const key = shape.primaryKey.filter((c) => c !== 'org_id')
  const values = JSON.parse(String(conflict.row_key)) as unknown[]
  if (values.length !== key.length) return
  const winning = conflict.winning_row === null ? null : (JSON.parse(String(conflict.winning_row)) as Record<string, unknown>)
  if (winning === null) {
    await deleteRow(trx, shape, req.orgId, key, values)
    return
  }
  // The cloud's image must be a row of this table, of this organisation and key (as a change of the page was).
  if (winning.org_id !== req.orgId || shape.columns.some((c) => !Object.hasOwn(winning, c))) return
  if (key.some((c, i) => winning[c] !== values[i])) return
  await upsertWinning(db, trx, dialect, req.orgId, shape, winning)
}

/**
 * A site server applies a page of the cloud's changes, exactly once: checked first (422, nothing written), then in
 * one transaction, as origin 'cloud' (so they are not sent back up): changes at or below the mark and superseded
 * ones (outbox/store.ts readChanges) are skipped, the rest applied as they come (the cloud wins, over a site row holding one of its unique values too), each row of a
 * cloud-authoritative table remembers the cloud's seq of the version it now holds (link_base: a later site edit goes
 * up with it), an open conflict against this server's change puts the cloud's version in place, and the mark moves.
 */
export async function applyPull(deps: SyncDeps, req: PullApplyRequest): Promise<PullApplyResult> {
  const { db, dialect } = deps.handle
  const targets = await validateBatch(db, dialect, req.changes, { orgId: req.orgId, sites: req.sites, flow: 'pull' })
  return db.transaction().execute(async (trx) => {
    const now = deps.clock.now()
    await ensureMark(trx, req.orgId, CLOUD_PEER, req.epoch, now)
    const mark = (await findMark(trx, req.orgId, CLOUD_PEER, dialect === 'postgres'))!
    const position: Cursor = { tx: mark.tx, seq: mark.seq }
    const fresh: Array<{ change: Change; target: LinkedShape }> = []
    for (const [i, change] of req.changes.entries()) if (isAfter(change, position)) fresh.push({ change, target: targets[i]! })
    // A superseded change moves the mark but writes nothing: the site holds a newer image of its row.
    const writes = fresh.filter((item) => !item.change.superseded)

    // References are checked at commit: a page may delete a controller before the conflict record that removes the
    // site's instance still pointing at it (on PostgreSQL every foreign key is deferrable: migration 2350).
    await (dialect === 'sqlite' ? sql`pragma defer_foreign_keys = on` : sql`set constraints all deferred`).execute(trx)
    await withApplyOrigin(trx, dialect, CLOUD_PEER, async () => {
      for (const item of writes) {
        await applyCloudChange(db, trx, dialect, req.orgId, item)
        const { change, target } = item
        if (target.spec.direction !== 'down') continue
        if (change.op === 'delete') await dropBase(trx, req.orgId, change.table, rowKey(change.key))
        else await setBase(trx, req.orgId, change.table, rowKey(change.key), change.seq)
        if (change.table === 'link_conflicts' && change.op === 'upsert') await applyVerdict(db, trx, dialect, req, change.row)
      }
    })

    let moved = position
    const last = fresh.at(-1)?.change
    if (last) moved = { tx: last.tx, seq: last.seq }
    if (req.next && isAfter(req.next, moved)) moved = { tx: req.next.tx, seq: req.next.seq }
    if (moved !== position) await writeMark(trx, req.orgId, CLOUD_PEER, { epoch: mark.epoch, tx: moved.tx, seq: moved.seq, digest: null }, now)
    return { mark: moved, applied: writes.length, skipped: req.changes.length - writes.length }
  })
}
