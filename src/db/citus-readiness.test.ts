// Citus readiness (issue 25, docs/citus.md), part one: the migrated PostgreSQL schema can be distributed by org_id as
// db/distribution.ts plans it. PostgreSQL only: the catalog is PostgreSQL's (SQLite is never distributed).
// Part two, every tenant query naming its org_id, is test/hardening/org-predicates.test.ts.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { postgresUrl, testDialects } from '../../test/harness.ts'
import { connectDatabase } from './connect.ts'
import { COORDINATOR_TABLES, DISTRIBUTION_COLUMN, REFERENCE_TABLES } from './distribution.ts'

interface Table {
  name: string
  columns: Map<number, string>
}
interface Key {
  table: string
  name: string
  kind: string
  columns: string[]
}
interface ForeignKey extends Key {
  target: string
  targetColumns: string[]
}

const classOf = (table: string): 'reference' | 'coordinator' | 'distributed' | 'unplanned' =>
  table in REFERENCE_TABLES ? 'reference' : table in COORDINATOR_TABLES ? 'coordinator' : 'unplanned'

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  test(`${dialect}: every table of the migrated schema is distributed by org_id, a reference table or a coordinator table`, async (t) => {
    const handle = await connectDatabase(await postgresUrl(), { poolSize: 1 })
    t.after(() => handle.close())
    const db = handle.db

    const { rows: attributes } = await sql<{ table: string; attnum: number; attname: string }>`
      select c.relname as table, a.attnum, a.attname from pg_class c join pg_attribute a on a.attrelid = c.oid
      where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped`.execute(db)
    const tables = new Map<string, Table>()
    for (const a of attributes) {
      const table = tables.get(a.table) ?? { name: a.table, columns: new Map() }
      table.columns.set(a.attnum, a.attname)
      tables.set(a.table, table)
    }
    const kind = (name: string) => {
      const planned = classOf(name)
      if (planned !== 'unplanned') return planned
      return [...tables.get(name)!.columns.values()].includes(DISTRIBUTION_COLUMN) ? 'distributed' : 'unplanned'
    }
    const names = (table: string, attnums: number[]) => attnums.map((n) => tables.get(table)!.columns.get(n) ?? `#${n}`)

    // Every table is in the plan; the plan names no table the schema lacks.
    assert.ok(tables.size >= 30, `tables found: ${tables.size}`)
    const unplanned = [...tables.keys()].filter((name) => kind(name) === 'unplanned').sort()
    assert.deepEqual(unplanned, [], 'tables without org_id that are neither REFERENCE_TABLES nor COORDINATOR_TABLES (db/distribution.ts)')
    const stale = [...Object.keys(REFERENCE_TABLES), ...Object.keys(COORDINATOR_TABLES)].filter((name) => !tables.has(name))
    assert.deepEqual(stale, [], 'db/distribution.ts names tables the schema does not have')

    // Primary keys, unique constraints and unique indexes (a unique constraint has its index: pg_index sees both).
    const { rows: indexes } = await sql<{ table: string; name: string; primary: boolean; keys: string; expressions: boolean }>`
      select c.relname as table, i.relname as name, x.indisprimary as primary, x.indkey::text as keys, x.indexprs is not null as expressions
      from pg_index x join pg_class c on c.oid = x.indrelid join pg_class i on i.oid = x.indexrelid
      where c.relnamespace = current_schema()::regnamespace and x.indisunique`.execute(db)
    const uniques: Key[] = indexes.map((x) => ({
      table: x.table,
      name: x.name,
      kind: x.primary ? 'primary key' : 'unique',
      columns: names(
        x.table,
        x.keys
          .split(' ')
          .map(Number)
          .filter((n) => n > 0),
      ),
    }))
    const withoutPrimaryKey = [...tables.keys()].filter(
      (name) => kind(name) === 'distributed' && !uniques.some((u) => u.table === name && u.kind === 'primary key'),
    )
    assert.deepEqual(withoutPrimaryKey, [], 'distributed tables without a primary key')
    const notByTenant = uniques
      .filter((u) => kind(u.table) === 'distributed' && !u.columns.includes(DISTRIBUTION_COLUMN))
      .map((u) => `${u.table}: ${u.kind} ${u.name} (${u.columns.join(', ')})`)
    assert.deepEqual(notByTenant, [], 'unique keys of distributed tables without org_id (Citus enforces uniqueness per shard only)')

    // Foreign keys: distributed → distributed carries org_id to org_id; distributed → reference is allowed;
    // reference → reference only; nothing refers to a coordinator table.
    const { rows: constraints } = await sql<{ table: string; name: string; target: string; keys: number[]; target_keys: number[] }>`
      select c.relname as table, x.conname as name, f.relname as target, x.conkey as keys, x.confkey as target_keys
      from pg_constraint x join pg_class c on c.oid = x.conrelid join pg_class f on f.oid = x.confrelid
      where c.relnamespace = current_schema()::regnamespace and x.contype = 'f'`.execute(db)
    const foreignKeys: ForeignKey[] = constraints.map((x) => ({
      table: x.table,
      name: x.name,
      kind: 'foreign key',
      columns: names(x.table, x.keys),
      target: x.target,
      targetColumns: names(x.target, x.target_keys),
    }))
    assert.ok(foreignKeys.length >= 40, `foreign keys found: ${foreignKeys.length}`)
    const refused = foreignKeys
      .filter((fk) => {
        const from = kind(fk.table)
        const to = kind(fk.target)
        if (to === 'reference') return from === 'coordinator'
        if (from !== 'distributed' || to !== 'distributed') return true
        const at = fk.columns.indexOf(DISTRIBUTION_COLUMN)
        return at < 0 || fk.targetColumns[at] !== DISTRIBUTION_COLUMN
      })
      .map((fk) => `${fk.table}.${fk.name} (${fk.columns.join(', ')}) → ${fk.target} (${fk.targetColumns.join(', ')})`)
    assert.deepEqual(refused, [], 'foreign keys Citus cannot keep (between distributed tables they must join org_id to org_id)')
  })
}
