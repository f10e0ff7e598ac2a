import { CompiledQuery, sql, type Insertable, type OperationNodeSource } from 'kysely'
import { directWriter, type Dialect } from '../../db/connect.ts'
import type { AuditEventsTable, Database, Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export interface AuditRow {
  id: string
  at: number
  actorKind: string
  actorId: string
  action: string
  target: string
  detail: string | null
}

function auditEventRow(orgId: OrgId, row: AuditRow): AuditEventsTable {
  return {
    org_id: orgId,
    id: row.id,
    at: row.at,
    actor_kind: row.actorKind,
    actor_id: row.actorId,
    action: row.action,
    target: row.target,
    detail: row.detail,
  }
}

export async function insertAuditEvent(db: Db, orgId: OrgId, row: AuditRow): Promise<void> {
  await db.insertInto('audit_events').values(auditEventRow(orgId, row)).execute()
}

/** One row for `table`, its columns named as in the schema. */
export interface RowInsert<T extends keyof Database> {
  table: T
  row: Insertable<Database[T]>
}

/** The SQL text of each one-row INSERT shape (dialect, table and column list) met so far: a handful, fixed by the code. */
const insertTexts = new Map<string, string>()

const isBindable = (value: unknown) => value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint'

/**
 * `insert` as a compiled query whose text is built once per dialect, table and column list, its values bound in
 * column order: Kysely builds and compiles a query's tree on every call, which on SQLite cost more than running a
 * small INSERT (issue 29, session 21). Only text, numbers and null are taken: anything else (a `sql` fragment, which
 * Kysely would write into the text) is a TypeError, as is a shape whose compiled parameters are not its values.
 */
export function compiledRowInsert<T extends keyof Database & string>(db: Db, dialect: Dialect, insert: RowInsert<T>): CompiledQuery {
  const row = insert.row as Record<string, unknown>
  const columns = Object.keys(row)
  const values = columns.map((column) => row[column])
  if (!values.every(isBindable)) throw new TypeError(`compiledRowInsert: a ${insert.table} row holds a value that is not text, a number or null`)
  const shape = `${dialect} ${insert.table} ${columns.join(',')}`
  let text = insertTexts.get(shape)
  if (text === undefined) {
    const compiled = db
      .insertInto(insert.table)
      .values(insert.row as never)
      .compile()
    if (compiled.parameters.length !== values.length || compiled.parameters.some((p, i) => p !== values[i])) {
      throw new TypeError(`compiledRowInsert: every value of a ${insert.table} row must be a bound parameter`)
    }
    text = compiled.sql
    insertTexts.set(shape, text)
  }
  return CompiledQuery.raw(text, values)
}

/**
 * SQLite: `insert` and its audit row, each a one-row INSERT compiled once (compiledRowInsert), in one transaction: at
 * once on the connection when it is free (connect.ts `directWriter`), else through Kysely once it is.
 */
export async function insertRowAndAuditEvent<T extends keyof Database & string>(db: Db, orgId: OrgId, insert: RowInsert<T>, row: AuditRow): Promise<void> {
  const queries = [compiledRowInsert(db, 'sqlite', insert), compiledRowInsert(db, 'sqlite', { table: 'audit_events', row: auditEventRow(orgId, row) })]
  if (directWriter(db)?.(queries)) return
  await db.transaction().execute(async (trx) => {
    for (const query of queries) await trx.executeQuery(query)
  })
}

/**
 * PostgreSQL: `write` (an INSERT … RETURNING of one row) and its audit row in one statement, the write a
 * data-modifying WITH and the audit row inserted only from the row it returned: atomic without a transaction, one
 * round trip where begin, write, audit and commit took four (issue 29). A write refused by a constraint fails the whole
 * statement, so no audit row exists without its change.
 */
export async function insertWithAuditEvent(db: Db, orgId: OrgId, write: OperationNodeSource, row: AuditRow): Promise<void> {
  await sql`with written as (${write})
    insert into audit_events (org_id, id, at, actor_kind, actor_id, action, target, detail)
    select ${orgId}, ${row.id}, ${row.at}, ${row.actorKind}, ${row.actorId}, ${row.action}, ${row.target}, ${row.detail} from written`.execute(db)
}

/** Newest first; after a keyset cursor (at, id); optionally only actions starting with `actionPrefix` (case-sensitive on both dialects). */
export function listAuditEventsPage(db: Db, orgId: OrgId, options: { limit: number; before?: { at: number; id: string }; actionPrefix?: string }) {
  let query = db.selectFrom('audit_events').selectAll().where('org_id', '=', orgId)
  const { before, actionPrefix } = options
  if (before) {
    query = query.where((eb) => eb.or([eb('at', '<', before.at), eb.and([eb('at', '=', before.at), eb('id', '<', before.id)])]))
  }
  // Not LIKE: SQLite's LIKE ignores ASCII case and both treat % and _ as wildcards.
  if (actionPrefix !== undefined) query = query.where(sql<boolean>`substr(action, 1, ${sql.lit(actionPrefix.length)}) = ${actionPrefix}`)
  return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(options.limit).execute()
}
