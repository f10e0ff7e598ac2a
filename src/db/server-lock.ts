import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'

/** A second `sitegrid serve` on a SQLite file another process serves: stops the start, with what to do. */
export class SqliteFileServed extends Error {
  constructor(dbPath: string, holder: Holder | undefined) {
    const who = holder ? `process ${holder.pid} (started ${holder.startedAt} in ${holder.folder})` : 'another process'
    super(
      `the SQLite database ${dbPath} is already served by ${who}. A site server serves its SQLite file from one ` +
        'process: use that server, or stop it first (SIGTERM) and start again; several processes need PostgreSQL.',
    )
    this.name = 'SqliteFileServed'
  }
}

interface Holder {
  pid: number
  folder: string
  startedAt: string
}

/**
 * SQLite: one `sitegrid serve` per database file, because the start-up recovery of interrupted historian imports and
 * network loads takes every unfinished one on a SQLite file as abandoned (README § Configuration, DATABASE_URL). The
 * lock is SQLite's own file lock on `<database>.serve-lock`, a small SQLite file whose write lock this process holds
 * (an open `BEGIN IMMEDIATE`, no page written) until it ends: the operating system frees it when the process ends in
 * any way, SIGKILL and power loss included, so no stale lock outlives its server. Readers may still read the file
 * (a reserved lock admits them), which is how a refused start names the holder. CLI commands do not take it.
 * Throws SqliteFileServed when another process holds it. Nothing for `:memory:`.
 */
export function holdSqliteServerLock(dbPath: string): void {
  if (dbPath === ':memory:') return
  const lockPath = `${dbPath}.serve-lock`
  mkdirSync(dirname(lockPath), { recursive: true })
  const lock = new BetterSqlite3(lockPath, { timeout: 0 })
  try {
    lock.exec('begin immediate')
    lock.exec('create table if not exists holder (id integer primary key check (id = 1), pid integer not null, folder text not null, started_at text not null)')
    lock.prepare('insert or replace into holder values (1, ?, ?, ?)').run(process.pid, process.cwd(), new Date().toISOString())
    // The commit waits out a refused process reading the holder; the lock is then taken again, for good.
    lock.pragma('busy_timeout = 2000')
    lock.exec('commit')
    lock.pragma('busy_timeout = 0')
    lock.exec('begin immediate')
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY') !== true) throw err
    const holder = readHolder(lock)
    lock.close()
    throw new SqliteFileServed(dbPath, holder)
  }
  // Kept open (and reachable) for the life of the process; closing it at exit frees the lock early.
  process.once('exit', () => lock.close())
}

function readHolder(lock: BetterSqlite3.Database): Holder | undefined {
  try {
    if (lock.inTransaction) lock.exec('rollback')
    const row = lock.prepare('select pid, folder, started_at from holder where id = 1').get() as { pid: number; folder: string; started_at: string } | undefined
    return row && { pid: row.pid, folder: row.folder, startedAt: row.started_at }
  } catch {
    return undefined // the holder is still writing its first row
  }
}
