import { sql } from 'kysely'
import type { Dialect } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'
import { appendTo } from '../../grouping.ts'

/** A row of a table or of a package part: column name to value. */
export type Row = Record<string, unknown>

export interface TableShape {
  name: string
  columns: string[]
  primaryKey: string[]
  textColumns: Set<string>
  /** SQL type of each column (used to type VALUES lists on PostgreSQL, and to check a package's values: value-rules.ts). */
  types: Record<string, string>
  /** Columns declared NOT NULL. */
  notNull: Set<string>
}

/** Columns (sorted by name, so packages compare equal across dialects) and primary key of a table, or undefined. */
export async function describeTable(db: Db, dialect: Dialect, name: string): Promise<TableShape | undefined> {
  if (dialect === 'sqlite') {
    const { rows } = await sql<{
      name: string
      pk: number
      type: string
      notnull: number
    }>`select name, pk, type, "notnull" from pragma_table_info(${name})`.execute(db)
    if (rows.length === 0) return undefined
    return {
      name,
      columns: rows.map((r) => r.name).sort(),
      primaryKey: rows
        .filter((r) => r.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((r) => r.name),
      textColumns: new Set(rows.filter((r) => /text|char/i.test(r.type)).map((r) => r.name)),
      types: Object.fromEntries(rows.map((r) => [r.name, r.type])),
      notNull: new Set(rows.filter((r) => r.notnull === 1 || r.pk > 0).map((r) => r.name)),
    }
  }
  const { rows } = await sql<{ column_name: string; data_type: string; is_nullable: string }>`
    select column_name, data_type, is_nullable from information_schema.columns
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
    notNull: new Set(rows.filter((r) => r.is_nullable === 'NO').map((r) => r.column_name)),
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

/**
 * The columns of each unique index of a table other than its primary key, in index order (`org_id` included where
 * the rule is per organisation; a rule without it holds across organisations, e.g. a bound domain).
 */
export async function describeUniqueKeys(db: Db, dialect: Dialect, name: string): Promise<string[][]> {
  if (dialect === 'sqlite') {
    const { rows } = await sql<{ index_name: string; column_name: string }>`
      select il.name as index_name, ii.name as column_name from pragma_index_list(${name}) il join pragma_index_info(il.name) ii
      where il."unique" = 1 and il.origin <> 'pk' and il.partial = 0 order by il.name, ii.seqno`.execute(db)
    return groupColumns(rows)
  }
  const { rows } = await sql<{ index_name: string; column_name: string }>`
    select i.relname as index_name, a.attname as column_name
    from pg_index x
    join pg_class t on t.oid = x.indrelid
    join pg_class i on i.oid = x.indexrelid
    join pg_namespace n on n.oid = t.relnamespace
    cross join lateral unnest(x.indkey) with ordinality as k(attnum, position)
    join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum
    where n.nspname = current_schema() and t.relname = ${name} and x.indisunique and not x.indisprimary and x.indpred is null
    order by i.relname, k.position`.execute(db)
  return groupColumns(rows)
}

function groupColumns(rows: Array<{ index_name: string; column_name: string }>): string[][] {
  const byIndex = new Map<string, string[]>()
  for (const r of rows) appendTo(byIndex, r.index_name, r.column_name)
  return [...byIndex.values()]
}
