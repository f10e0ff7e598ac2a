/** SQLite's bound-parameter limit (32 766 since 3.32; PostgreSQL's is 65 535): a multi-row statement stays under it. */
const MAX_PARAMETERS = 32_766
/** At most this many rows a statement: a prepared SQLite statement of 1 000 rows of 14 columns holds ~1.3 MiB. */
const MAX_ROWS = 1024

/**
 * Writes `rows` in multi-row statements (`columns` bound parameters a row) whose sizes are powers of two: as many of the
 * largest size as fit, then the rest in halving sizes. SQLite keeps prepared statements by their text (db/connect.ts),
 * so a bulk of any size uses at most eleven texts a table instead of one per size; PostgreSQL parses each anyway.
 */
export async function inMultiRowStatements<T>(rows: readonly T[], columns: number, write: (chunk: T[]) => Promise<unknown>): Promise<void> {
  let size = MAX_ROWS
  while (size > 1 && size * columns > MAX_PARAMETERS) size /= 2
  for (let i = 0; i < rows.length; ) {
    while (size > 1 && rows.length - i < size) size /= 2
    await write(rows.slice(i, i + size))
    i += size
  }
}
