import { connectDatabase, type ConnectOptions, type DatabaseHandle } from '../db/connect.ts'
import { holdSqliteServerLock, SqliteFileServed } from '../db/server-lock.ts'

type DatabaseSetting = 'DATABASE_URL' | 'SITEGRID_DATABASE_APP_URL'

/** A database URL fit for a log or a message: the credentials of `postgres://user:password@…` masked. */
export function describeDatabase(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@')
}

/**
 * The commands' database, opened and tried with one round trip, so that a wrong URL, an unreachable server, a
 * refused password or a file SQLite cannot open stops the command with one line naming the setting (never the
 * password), rather than the driver's bare `connect ECONNREFUSED` from the first query.
 */
export async function openDatabase(url: string, setting: DatabaseSetting, options: ConnectOptions): Promise<DatabaseHandle> {
  const refused = (err: unknown) => cannotOpen(url, setting, err)
  let handle: DatabaseHandle
  try {
    handle = await connectDatabase(url, options)
  } catch (err) {
    throw refused(err)
  }
  try {
    await handle.ping()
  } catch (err) {
    await handle.close().catch(() => undefined)
    throw refused(err)
  }
  return handle
}

/** `serve` on SQLite: the one-server lock beside the file (db/server-lock.ts); a file it cannot open is named as the database is. */
export function holdServeLock(url: string): void {
  try {
    holdSqliteServerLock(url.slice('sqlite:'.length))
  } catch (err) {
    throw err instanceof SqliteFileServed ? err : cannotOpen(url, 'DATABASE_URL', err)
  }
}

function cannotOpen(url: string, setting: DatabaseSetting, err: unknown): Error {
  const { message, code } = err as Error & { code?: unknown }
  // SQLite's own words say neither which file nor why: the usual cause of a new server is a folder it may not write.
  const hint = code === 'SQLITE_CANTOPEN' ? ' (SQLite creates the file, its -wal and -shm and a .serve-lock beside it: a folder this user may write)' : ''
  return new Error(`${setting}: cannot open the database ${describeDatabase(url)}: ${message}${hint}`, { cause: err })
}
