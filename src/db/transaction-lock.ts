import { sql } from 'kysely'
import type { Dialect } from './connect.ts'
import type { Db } from './schema.ts'

/**
 * Holds the lock named `name` until the transaction `trx` ends, so that the writers of one thing take turns: a
 * check-then-write (a limit counted, a twin looked for, a version compared) then sees the committed result of the
 * writer before it instead of racing it. PostgreSQL: a transaction-level advisory lock, across the processes of a
 * cell. SQLite: nothing to take, every transaction begins IMMEDIATE and so holds the file's one write lock (one
 * server process serves a file, src/db/server-lock.ts).
 */
export async function lockUntilCommit(trx: Db, dialect: Dialect, name: string): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtextextended(${`sitegrid.${name}`}, 0))`.execute(trx)
}
