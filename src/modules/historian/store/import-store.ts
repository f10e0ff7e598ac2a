import { sql } from 'kysely'
import type { DatabaseHandle } from '../../../db/connect.ts'
import type { Db, HistorianBatchesTable } from '../../../db/schema.ts'
import { lockUntilCommit } from '../../../db/transaction-lock.ts'
import type { OrgId } from '../../../ids.ts'
import { findCollisions, insertBatch, updateBatch, type BatchWhere, type StoredValue } from './queries.ts'
import { failBatch, removeBatch } from './batch-end.ts'
import type { SampleBuffer } from './sample-buffer.ts'
import { createSampleWriter, type SampleWriter, type WriteTarget } from './sample-writer.ts'
import { openExtraConnection, openImportSession, type ExtraConnection, type ImportSession } from './session.ts'

/** Keys looked up per statement when listing collisions (2 parameters each; SQLite allows 32 766). */
const COLLISION_KEYS_PER_QUERY = 5000

/** Where a part of each chunk is written: a connection and the writer that knows its series. Opaque to the service. */
export interface Lane {
  readonly db: Db
  readonly writer: SampleWriter
}

/** A sample of a part that met another batch's value (kept): its row in the part, and the stored value. */
export interface PartCollision {
  index: number
  ts: number
  stored: StoredValue
}

/** What one lane's transaction wrote of its part: rows tried, rows written, and the first collisions (up to `room`). */
export interface PartWritten {
  attempted: number
  written: number
  collisions: PartCollision[]
}

export type BatchChanges = Partial<HistorianBatchesTable>

/**
 * The storage of one import (ImportRun): its batch row, its samples, and the connections they go through. PostgreSQL:
 * a pinned connection holding the batch's advisory lock (session.ts), a second one while the pool can spare it, and
 * samples loaded with COPY (sample-writer.ts); SQLite: the shared connection and multi-row inserts. The service
 * decides what to write and when; this decides how.
 */
export interface ImportStore {
  /** PostgreSQL: a write runs on the server while the next chunk is parsed (SQLite's driver is synchronous). */
  readonly overlapsWrites: boolean
  /** Takes the batch's lock, then inserts its row: a recovering process never sees the batch running without its lock. */
  begin(row: HistorianBatchesTable): Promise<void>
  /**
   * The lanes of the next write: the session's connection, and a second connection while the pool can spare one.
   * That one is given back (after `settle`, which waits for the write in flight) as soon as anyone waits for a
   * connection: requests come before import speed.
   */
  lanes(settle: () => Promise<void>): Promise<Lane[]>
  /** Does the writes' CPU work ahead (SampleWriter.prepare): `parts[i]` is the part of `lanes[i]`. */
  prepare(lanes: Lane[], parts: SampleBuffer[]): void
  /**
   * Records `progress` on the batch row, then writes `parts[i]` on `lanes[i]`, each in its own transaction, and lists
   * each part's first collisions (at most `room`). A failing part fails the whole once the others are over too
   * (committed or rolled back), so the clean-up that follows runs when nothing of the batch is being written any more.
   */
  write(lanes: Lane[], progress: BatchChanges, parts: SampleBuffer[], room: number): Promise<PartWritten[]>
  /** Changes the batch row (on the session's connection: the only one that writes it, in order). */
  update(changes: BatchChanges): Promise<void>
  /**
   * Runs `work` in the transaction that completes the batch: no statement timeout (a forced merge of millions of rows
   * may run longer than the pool's), under a lock on the pair of files, so that uploads of the same two files complete
   * one after another and the second sees the first as its twin.
   */
  finish(files: { trendSha256: string; mappingSha256: string }, work: (trx: Db) => Promise<void>): Promise<void>
  /**
   * Removes what the batch wrote, if it inserted its row: `refused` (a problem answered to the client) leaves no
   * trace; otherwise the batch stays `failed` with the changes `failed` answers. Never throws (the start-up recovery removes what is left);
   * releases the connections.
   */
  fail(refused: boolean, where: BatchWhere, failed: () => { error: string; updated_at: number }): Promise<void>
  /** Ends the import's connections (the extra one first: its writes are over by then). */
  release(): Promise<void>
}

export function createImportStore(handle: DatabaseHandle, target: WriteTarget, scope: { orgId: OrgId; siteCode: string; batchId: string }): ImportStore {
  const { orgId, batchId } = scope
  let session: ImportSession | undefined
  let writer: SampleWriter | undefined
  /**
   * PostgreSQL: a second connection with its own writer, while the pool can spare one. While it is there every chunk
   * is written in two parts at once, the even-numbered series on the session's connection and the odd-numbered ones
   * on this one: no key is written by both, and one chunk's parts are over before the next chunk's begin.
   */
  let extra: ExtraConnection | undefined
  let extraWriter: SampleWriter | undefined
  let hasBatchRow = false
  const newWriter = () => createSampleWriter(handle.dialect, target, scope)

  async function release(): Promise<void> {
    const spare = extra
    extra = undefined
    await spare?.release()
    await session?.release()
  }

  return {
    overlapsWrites: handle.dialect === 'postgres',

    async begin(row) {
      session = await openImportSession(handle, batchId)
      await insertBatch(session.db, row)
      hasBatchRow = true
      writer = newWriter()
      extra = openExtraConnection(handle)
    },

    async lanes(settle) {
      const lanes: Lane[] = [{ db: session!.db, writer: writer! }]
      extra ??= openExtraConnection(handle)
      const spare = extra
      if (spare?.db === undefined) return lanes
      if (handle.spareConnections() >= 0) return [...lanes, { db: spare.db, writer: (extraWriter ??= newWriter()) }]
      await settle()
      extra = undefined
      await spare.release()
      return lanes
    },

    prepare(lanes, parts) {
      lanes.forEach((lane, i) => lane.writer.prepare(parts[i]!))
    },

    async write(lanes, progress, parts, room) {
      await updateBatch(session!.db, orgId, batchId, progress)
      const results = await Promise.allSettled(
        lanes.map(({ db: on, writer: w }, i) =>
          on.transaction().execute(async (trx) => {
            const part = parts[i]!
            const { attempted, written } = await w.write(trx, part)
            const collisions = written < attempted ? await collisionsOf(trx, w, part, attempted - written, room) : []
            return { attempted, written, collisions }
          }),
        ),
      )
      const failed = results.find((r) => r.status === 'rejected')
      if (failed !== undefined) throw failed.reason
      return results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
    },

    async update(changes) {
      await updateBatch(session!.db, orgId, batchId, changes)
    },

    async finish(files, work) {
      await session!.db.transaction().execute(async (trx) => {
        if (handle.dialect === 'postgres') await sql`set local statement_timeout = 0`.execute(trx)
        await lockUntilCommit(trx, handle.dialect, `historian ${orgId} ${scope.siteCode} ${files.trendSha256} ${files.mappingSha256}`)
        await work(trx)
      })
    },

    async fail(refused, where, failed) {
      if (!hasBatchRow) {
        await release()
        return
      }
      hasBatchRow = false
      const db = session?.db ?? handle.db
      await db
        .transaction()
        .execute(async (trx) => {
          if (refused) await removeBatch(trx, orgId, batchId, where)
          else await failBatch(trx, orgId, batchId, where, failed())
        })
        .catch(() => {
          // The start-up recovery (service.recoverInterrupted) removes what is left.
        })
      await release()
    },

    release,
  }

  /**
   * Without force: which rows of the part met another batch's value (kept), in the part's order, up to `room`;
   * `count` is how many collided (the search stops once all are found).
   */
  async function collisionsOf(db: Db, w: SampleWriter, part: SampleBuffer, count: number, room: number): Promise<PartCollision[]> {
    const list: PartCollision[] = []
    let found = 0
    for (let start = 0; start < part.length && found < count && list.length < room; start += COLLISION_KEYS_PER_QUERY) {
      const end = Math.min(part.length, start + COLLISION_KEYS_PER_QUERY)
      const index = new Map<string, number>()
      const keys = []
      for (let i = start; i < end; i++) {
        const seriesId = w.seriesId(part.pair[i]!)
        index.set(`${seriesId}\u0000${part.ts[i]}`, i)
        keys.push({ seriesId, ts: part.ts[i]! })
      }
      const rows = await findCollisions(db, orgId, batchId, keys)
      rows.sort((a, b) => index.get(`${a.series_id}\u0000${a.ts}`)! - index.get(`${b.series_id}\u0000${b.ts}`)!)
      for (const r of rows) {
        found++
        if (list.length >= room) break
        list.push({ index: index.get(`${r.series_id}\u0000${r.ts}`)!, ts: r.ts, stored: r.stored })
      }
    }
    return list
  }
}
