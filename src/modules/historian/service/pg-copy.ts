import { CompiledQuery } from 'kysely'
import { from as copyFrom } from 'pg-copy-streams'
import type { Db } from '../../../db/schema.ts'

/**
 * Runs `COPY … FROM STDIN` with `payload` (COPY text format) on the connection `db` is bound to (a transaction or a
 * pinned connection), and answers the rows loaded. Kysely exposes no driver client, but its PostgreSQL connection
 * hands `sql` to `pg.Client.query` as is, and pg runs any object with `submit()` as a query: so the pg-copy-streams
 * query goes in as the statement, made awaitable (Kysely awaits what `query` returns) until PostgreSQL confirms.
 */
export async function copyIn(db: Db, statement: string, payload: Buffer): Promise<number> {
  const stream = copyFrom(statement)
  const done = new Promise<{ command: string; rowCount: number; rows: never[] }>((resolve, reject) => {
    stream.on('finish', () => resolve({ command: 'COPY', rowCount: stream.rowCount, rows: [] }))
    stream.on('error', reject)
  })
  const awaitable = Object.assign(stream, { then: done.then.bind(done) })
  const running = db.executeQuery({ ...CompiledQuery.raw(statement), sql: awaitable as unknown as string })
  stream.end(payload)
  await running
  return stream.rowCount
}

/** One field of COPY's text format: `\N` for null; backslash, tab, newline and CR escaped. */
export function copyText(value: string | null): string {
  if (value === null) return '\\N'
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c === 0x5c || c === 0x09 || c === 0x0a || c === 0x0d) return value.replace(/[\\\t\n\r]/g, escapeChar)
  }
  return value
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' }
const escapeChar = (c: string) => ESCAPES[c]!
