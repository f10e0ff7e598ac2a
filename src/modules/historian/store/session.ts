import { sql } from 'kysely'
import type { DatabaseHandle } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'

/** Where one import runs; released when the import ends, however it ends. */
export interface ImportSession {
  db: Db
  release(): Promise<void>
}

/** The advisory lock an import holds while it runs (exported for the test that stands in for a dead process's connection). */
export const lockKey = (batchId: string) => sql`hashtextextended(${`sitegrid.historian.${batchId}`}, 0)`

/**
 * PostgreSQL: the import runs on one pinned connection that holds a session advisory lock named by the batch. A
 * process that dies drops its connection and with it the lock, so any process can tell a dead import from a live
 * one (`isAbandoned`), which N processes sharing the database need. SQLite (one server process per file, site
 * mode): the shared connection; a running batch found at start-up is abandoned by definition.
 */
export async function openImportSession(handle: DatabaseHandle, batchId: string): Promise<ImportSession> {
  if (handle.dialect === 'sqlite') return { db: handle.db, release: async () => {} }
  const pin = pinConnection(handle, {
    onPinned: (conn) => sql`select pg_advisory_lock(${lockKey(batchId)})`.execute(conn),
    onRelease: (conn) => sql`select pg_advisory_unlock(${lockKey(batchId)})`.execute(conn),
  })
  return { db: await pin.pinned, release: pin.release }
}

/** A second pinned connection for one import: `db` is there once the pool gave one, and stays until release. */
export interface ExtraConnection {
  readonly db: Db | undefined
  release(): Promise<void>
}

/**
 * PostgreSQL: asks the pool for a second connection for the import, only while the pool has one to spare (otherwise
 * answers undefined: ask again later), and without waiting for it; the import uses it from the first write after it
 * arrived, and gives it back when callers wait for a connection (ImportRun). The connection carries the tenant scope
 * of the caller, like every connection (db/connect.ts). No advisory lock: the import's session holds it, and the
 * import waits for this connection's writes before it ends either way.
 */
export function openExtraConnection(handle: DatabaseHandle): ExtraConnection | undefined {
  if (handle.spareConnections() < 1) return undefined // SQLite: always 0
  return pinConnection(handle)
}

/**
 * Holds one pool connection beyond a query or a transaction: the pool lends it to a callback that waits for
 * `release`. `onPinned` runs on it first (`pinned` rejects if that or the pool fails), `onRelease` last (its failure
 * ignored: the connection goes back either way). Released before the pool lent it, the connection is given back as
 * soon as it comes, without waiting for it.
 */
function pinConnection(handle: DatabaseHandle, hooks: { onPinned?: (conn: Db) => Promise<unknown>; onRelease?: (conn: Db) => Promise<unknown> } = {}) {
  let db: Db | undefined
  let isReleased = false
  let release!: () => void
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let lent!: (conn: Db) => void
  let failed!: (err: unknown) => void
  const pinned = new Promise<Db>((resolve, reject) => {
    lent = resolve
    failed = reject
  })
  pinned.catch(() => {}) // whoever awaits `pinned` sees the failure; nobody else needs to
  const finished = handle.db
    .connection()
    .execute(async (conn) => {
      if (isReleased) return
      await hooks.onPinned?.(conn)
      db = conn
      lent(conn)
      await released
      await hooks.onRelease?.(conn).catch(() => {})
    })
    .catch(failed)
  return {
    pinned,
    get db() {
      return db
    },
    release: async () => {
      isReleased = true
      const had = db !== undefined
      db = undefined
      release()
      if (had) await finished
    },
  }
}

/** Whether the process running this batch is gone (see openImportSession); calls `clean` while holding its lock. */
export async function whenAbandoned(handle: DatabaseHandle, batchId: string, clean: (db: Db) => Promise<void>): Promise<boolean> {
  if (handle.dialect === 'sqlite') {
    await clean(handle.db)
    return true
  }
  return handle.db.connection().execute(async (conn) => {
    const got = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${lockKey(batchId)}) as ok`.execute(conn)
    if (got.rows[0]?.ok !== true) return false
    try {
      await clean(conn)
      return true
    } finally {
      await sql`select pg_advisory_unlock(${lockKey(batchId)})`.execute(conn)
    }
  })
}
