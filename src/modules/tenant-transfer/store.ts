import { sql, type RawBuilder } from 'kysely'
import type { Dialect } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'
import type { Row, TableShape } from './introspect.ts'

// Generic over the exported tables, so every query here is raw SQL built from introspected column names
// (never from package content: a package's keys are checked against the table's columns first).

const PAGE = 2000

function scopeFilter(table: TableShape, orgId: string, siteCode: string | null): RawBuilder<unknown> {
  const site = siteCode === null ? sql`` : table.name === 'sites' ? sql` and ${sql.ref('code')} = ${siteCode}` : sql` and ${sql.ref('site_code')} = ${siteCode}`
  return sql`${sql.ref('org_id')} = ${orgId}${site}`
}

// PostgreSQL sorts text by its collation; "C" makes the keyset order byte order, as SQLite's.
function keyRef(table: TableShape, dialect: Dialect, column: string): RawBuilder<unknown> {
  return dialect === 'postgres' && table.textColumns.has(column) ? sql`${sql.ref(column)} collate "C"` : sql`${sql.ref(column)}`
}

/** The column a row carries the `extra` value of streamRows in. */
export const EXTRA_COLUMN = '__extra'

/**
 * The organisation's (or one site's) rows of a table in primary-key order, a page at a time: constant memory. `extra`:
 * a value read with each row in the same statement (its own columns qualified by the table's name), as EXTRA_COLUMN.
 */
export async function* streamRows(
  db: Db,
  dialect: Dialect,
  table: TableShape,
  columns: string[],
  orgId: string,
  siteCode: string | null,
  extra?: RawBuilder<unknown>,
): AsyncGenerator<Row> {
  const key = table.primaryKey.filter((c) => c !== 'org_id')
  let after: Row | undefined
  const own = columns.map((c) => sql.ref(c))
  const select = sql.join(extra === undefined ? own : [...own, sql`(${extra}) as ${sql.ref(EXTRA_COLUMN)}`])
  const order = sql.join(key.map((c) => keyRef(table, dialect, c)))
  for (;;) {
    const cursor =
      after === undefined
        ? sql``
        : sql` and (${order}) > (${sql.join(key.map((c) => (dialect === 'postgres' && table.textColumns.has(c) ? sql`${after![c]} collate "C"` : sql`${after![c]}`)))})`
    const { rows } =
      await sql<Row>`select ${select} from ${sql.table(table.name)} where ${scopeFilter(table, orgId, siteCode)}${cursor} order by ${order} limit ${PAGE}`.execute(
        db,
      )
    for (const row of rows) yield row
    if (rows.length < PAGE) return
    after = rows[rows.length - 1]
  }
}

/** Existing rows of the target organisation with the same primary keys as `rows`. */
export async function findExisting(db: Db, dialect: Dialect, table: TableShape, columns: string[], orgId: string, rows: Row[]): Promise<Row[]> {
  const key = table.primaryKey.filter((c) => c !== 'org_id')
  // A row-value IN over a VALUES list uses the primary-key index on both dialects; PostgreSQL needs the
  // parameters typed, since a VALUES list is resolved before the comparison.
  const value = (c: string, v: unknown) => (dialect === 'postgres' ? sql`cast(${v} as ${sql.raw(table.types[c]!)})` : sql`${v}`)
  const list = sql.join(rows.map((r) => sql`(${sql.join(key.map((c) => value(c, r[c])))})`))
  const { rows: found } = await sql<Row>`select ${sql.join(columns.map((c) => sql.ref(c)))} from ${sql.table(table.name)}
    where ${sql.ref('org_id')} = ${orgId} and (${sql.join(key.map((c) => sql.ref(c)))}) in (values ${list})`.execute(db)
  return found
}

/** Whether the organisation has any row in the table: an import into an empty table needs no per-row lookups. */
export async function hasAnyRow(db: Db, table: TableShape, orgId: string): Promise<boolean> {
  const { rows } = await sql`select 1 from ${sql.table(table.name)} where ${sql.ref('org_id')} = ${orgId} limit 1`.execute(db)
  return rows.length > 0
}

/** Inserts rows, replacing those with the same primary key (the caller decided they may be replaced). */
/**
 * Inserts rows, replacing those with the same key. Columns in `keep` (those a package never carries: verifiers)
 * keep their value on a replace, so importing a key's metadata over a working key here never disables it.
 */
export async function upsertRows(db: Db, table: TableShape, orgId: string, rows: Row[], keep: readonly string[]): Promise<void> {
  const columns = table.columns
  const others = columns.filter((c) => !table.primaryKey.includes(c) && !keep.includes(c))
  const values = sql.join(rows.map((r) => sql`(${sql.join(columns.map((c) => (c === 'org_id' ? orgId : (r[c] ?? null))))})`))
  const update = others.length === 0 ? sql`do nothing` : sql`do update set ${sql.join(others.map((c) => sql`${sql.ref(c)} = excluded.${sql.ref(c)}`))}`
  await sql`insert into ${sql.table(table.name)} (${sql.join(columns.map((c) => sql.ref(c)))}) values ${values}
    on conflict (${sql.join(table.primaryKey.map((c) => sql.ref(c)))}) ${update}`.execute(db)
}

/**
 * Begins upload `uploadId` (in the caller's transaction): the organisation's staged package, or the upload still
 * arriving, is replaced by an empty one of that id. The upsert comes first: on PostgreSQL it waits for a chunk being
 * written under the earlier upload (which holds the row FOR SHARE) and for an import applying the staged package
 * (FOR UPDATE), so the delete after it sees every chunk they committed; after it, their id no longer matches.
 */
export async function replaceStagedPackage(trx: Db, orgId: string, row: { uploadId: string; stagedAt: number; stagedBy: string }): Promise<void> {
  await sql`insert into tenant_import_packages (org_id, upload_id, staged_at, staged_by, bytes, is_valid, summary)
    values (${orgId}, ${row.uploadId}, ${row.stagedAt}, ${row.stagedBy}, 0, 0, null)
    on conflict (org_id) do update set upload_id = excluded.upload_id, staged_at = excluded.staged_at, staged_by = excluded.staged_by,
      bytes = 0, is_valid = 0, summary = null`.execute(trx)
  await sql`delete from tenant_import_chunks where org_id = ${orgId}`.execute(trx)
}

/** Holds the staged row of upload `uploadId` until the statement ends (PostgreSQL; SQLite has one writer at a time). */
const whileStaged = (dialect: Dialect) => (dialect === 'postgres' ? sql` for share` : sql``)

/**
 * A chunk of upload `uploadId`, its bytes bound as they are (bytea, blob), written only while that upload is the
 * organisation's: false once a later upload replaced it (nothing written).
 */
export async function appendChunk(db: Db, dialect: Dialect, orgId: string, uploadId: string, seq: number, data: Buffer): Promise<boolean> {
  const bytes = dialect === 'postgres' ? sql`cast(${data} as bytea)` : sql`${data}`
  const result = await sql`insert into tenant_import_chunks (org_id, seq, data)
    select org_id, ${seq}, ${bytes} from tenant_import_packages where org_id = ${orgId} and upload_id = ${uploadId}${whileStaged(dialect)}`.execute(db)
  return Number(result.numAffectedRows ?? 0) === 1
}

/** Marks upload `uploadId` checked and staged; false when a later upload replaced it. */
export async function markStaged(db: Db, orgId: string, uploadId: string, bytes: number, summary: string): Promise<boolean> {
  const result = await sql`update tenant_import_packages set bytes = ${bytes}, is_valid = 1, summary = ${summary}
    where org_id = ${orgId} and upload_id = ${uploadId}`.execute(db)
  return Number(result.numAffectedRows ?? 0) === 1
}

/**
 * The organisation's staged package or upload still arriving (isValid false), held until the caller's transaction ends
 * (PostgreSQL: FOR UPDATE, so no upload replaces it meanwhile; SQLite: the transaction's write lock).
 */
export async function takeStaged(trx: Db, dialect: Dialect, orgId: string): Promise<{ uploadId: string; isValid: boolean } | undefined> {
  const lock = dialect === 'postgres' ? sql` for update` : sql``
  const { rows } = await sql<{
    upload_id: string
    is_valid: number
  }>`select upload_id, is_valid from tenant_import_packages where org_id = ${orgId}${lock}`.execute(trx)
  return rows[0] === undefined ? undefined : { uploadId: rows[0].upload_id, isValid: rows[0].is_valid === 1 }
}

/**
 * Drops upload `uploadId` with its chunks (in the caller's transaction); false, dropping nothing, when a later upload
 * replaced it. While the row carries the id, every chunk of the organisation is that upload's (a replacement deletes
 * the chunks in the transaction that changes the id).
 */
export async function dropStaged(trx: Db, orgId: string, uploadId: string): Promise<boolean> {
  const result = await sql`delete from tenant_import_packages where org_id = ${orgId} and upload_id = ${uploadId}`.execute(trx)
  if (Number(result.numAffectedRows ?? 0) === 0) return false
  await sql`delete from tenant_import_chunks where org_id = ${orgId}`.execute(trx)
  return true
}

/** The staged bytes in order, `perRead` chunks a query. */
export async function* readChunks(db: Db, orgId: string, perRead: number): AsyncGenerator<Buffer> {
  let after = -1
  for (;;) {
    const { rows } = await sql<{
      seq: number
      data: Buffer
    }>`select seq, data from tenant_import_chunks where org_id = ${orgId} and seq > ${after} order by seq limit ${perRead}`.execute(db)
    for (const r of rows) yield r.data
    if (rows.length < perRead) return
    after = rows[rows.length - 1]!.seq
  }
}

/**
 * `select` of the rows whose `columns` equal those of one of `rows`: in the organisation, or (`elsewhere`) in every
 * other one (the caller runs that in the system scope: row-level security shows one organisation).
 */
export async function findByColumns(
  db: Db,
  dialect: Dialect,
  table: TableShape,
  where: { orgId: string; elsewhere: boolean },
  select: string[],
  columns: string[],
  rows: Row[],
): Promise<Row[]> {
  const value = (c: string, v: unknown) => (dialect === 'postgres' ? sql`cast(${v} as ${sql.raw(table.types[c]!)})` : sql`${v}`)
  const list = sql.join(rows.map((r) => sql`(${sql.join(columns.map((c) => value(c, r[c])))})`))
  const org = where.elsewhere ? sql`${sql.ref('org_id')} <> ${where.orgId}` : sql`${sql.ref('org_id')} = ${where.orgId}`
  const { rows: found } = await sql<Row>`select ${sql.join(select.map((c) => sql.ref(c)))} from ${sql.table(table.name)}
    where ${org} and (${sql.join(columns.map((c) => sql.ref(c)))}) in (values ${list})`.execute(db)
  return found
}
