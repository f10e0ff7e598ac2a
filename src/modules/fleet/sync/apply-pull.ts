import { applyAsTheyCome } from './apply-rows.ts'
import type { SyncDeps } from './apply-push.ts'
import { rowKey, withApplyOrigin, type Change, type Cursor } from './outbox-port.ts'
import { dropBase, ensureMark, findMark, setBase, writeMark } from './store.ts'
import { validateBatch, type LinkedShape } from './validate.ts'

/** The peer name a site server keeps its mark of the cloud's changes under (link_marks.peer). */
export const CLOUD_PEER = 'cloud'

export interface PullApplyRequest {
  orgId: string
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

const after = (a: Cursor, b: Cursor) => a.tx > b.tx || (a.tx === b.tx && a.seq > b.seq)

/**
 * A site server applies a page of the cloud's changes, exactly once: checked first (422, nothing written), then in
 * one transaction, as origin 'cloud' (so they are not sent back up): changes at or below the mark are skipped, the
 * rest applied as they come (the cloud wins), each row of a cloud-authoritative table remembers the cloud's seq of
 * the version it now holds (link_base: a later site edit goes up with it), and the mark moves.
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
    for (const [i, change] of req.changes.entries()) if (after(change, position)) fresh.push({ change, target: targets[i]! })

    await withApplyOrigin(trx, dialect, CLOUD_PEER, async () => {
      await applyAsTheyCome(trx, req.orgId, fresh)
      for (const { change, target } of fresh) {
        if (target.spec.direction !== 'down') continue
        if (change.op === 'delete') await dropBase(trx, req.orgId, change.table, rowKey(change.key))
        else await setBase(trx, req.orgId, change.table, rowKey(change.key), change.seq)
      }
    })

    let moved = position
    const last = fresh.at(-1)?.change
    if (last) moved = { tx: last.tx, seq: last.seq }
    if (req.next && after(req.next, moved)) moved = { tx: req.next.tx, seq: req.next.seq }
    if (moved !== position) await writeMark(trx, req.orgId, CLOUD_PEER, { epoch: mark.epoch, tx: moved.tx, seq: moved.seq, digest: null }, now)
    return { mark: moved, applied: fresh.length, skipped: req.changes.length - fresh.length }
  })
}
