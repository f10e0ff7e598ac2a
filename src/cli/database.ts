import { connectDatabase, type ConnectOptions, type DatabaseHandle } from '../db/connect.ts'

/** A database URL fit for a log or a message: the credentials of `postgres://user:password@…` masked. */
export function describeDatabase(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@')
}

/**
 * The commands' database, opened and tried with one round trip, so that a wrong URL, an unreachable server, a
 * refused password or a file SQLite cannot open stops the command with one line naming the setting (never the
 * password), rather than the driver's bare `connect ECONNREFUSED` from the first query.
 */
export async function openDatabase(url: string, setting: 'DATABASE_URL' | 'SITEGRID_DATABASE_APP_URL', options: ConnectOptions): Promise<DatabaseHandle> {
  const refused = (err: unknown) => new Error(`${setting}: cannot open the database ${describeDatabase(url)}: ${(err as Error).message}`)
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
