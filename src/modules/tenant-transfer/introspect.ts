import { sql } from 'kysely'
import type { Dialect } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'

export interface TableShape {
  name: string
  columns: string[]
  primaryKey: string[]
  textColumns: Set<string>
  /** SQL type of each column (used to type VALUES lists on PostgreSQL). */
  types: Record<string, string>
}

/** Columns (sorted by name, so packages compare equal across dialects) and primary key of a table, or undefined. */
export async function describeTable(db: Db, dialect: Dialect, name: string): Promise<TableShape | undefined> {
  if (dialect === 'sqlite') {
    const { rows } = await sql<{ name: string; pk: number; type: string }>`select name, pk, type from pragma_table_info(${name})`.execute(db)
    if (rows.length === 0) return undefined
    return {
      name,
      columns: rows.map((r) => r.name).sort(),
      primaryKey: rows.filter((r) => r.pk > 0).sort((a, b) => a.pk - b.pk).map((r) => r.name),
      textColumns: new Set(rows.filter((r) => /text|char/i.test(r.type)).map((r) => r.name)),
      types: Object.fromEntries(rows.map((r) => [r.name, r.type])),
    }
  }
  const { rows } = await sql<{ column_name: string; data_type: string }>`
    select column_name, data_type from information_schema.columns
    where table_schema = current_schema() and table_name = ${name}`.execute(db)
  if (rows.length === 0) return undefined
  const pk = await sql<{ column_name: string }>`
    select kcu.column_name from information_schema.table_constraints tc
    join information_schema.key_column_usage kcu on kcu.constraint_name = tc.constraint_name and kcu.table_schema = tc.table_schema
    where tc.table_schema = current_schema() and tc.table_name = ${name} and tc.constraint_type = 'PRIMARY KEY'
    order by kcu.ordinal_position`.execute(db)
  return {
    name,
    columns: rows.map((r) => r.column_name).sort(),
    primaryKey: pk.rows.map((r) => r.column_name),
    textColumns: new Set(rows.filter((r) => /text|char/i.test(r.data_type)).map((r) => r.column_name)),
    types: Object.fromEntries(rows.map((r) => [r.column_name, r.data_type])),
  }
}

export async function listTablesWithOrgId(db: Db, dialect: Dialect): Promise<string[]> {
  if (dialect === 'sqlite') {
    const { rows } = await sql<{ name: string }>`
      select m.name from sqlite_master m join pragma_table_info(m.name) c
      where m.type = 'table' and c.name = 'org_id' order by m.name`.execute(db)
    return rows.map((r) => r.name)
  }
  const { rows } = await sql<{ table_name: string }>`
    select table_name from information_schema.columns
    where table_schema = current_schema() and column_name = 'org_id' order by table_name`.execute(db)
  return rows.map((r) => r.table_name)
}
