// Migration 2350: on PostgreSQL every foreign key is deferrable (initially immediate), so that the fleet link's pull
// can check references at commit as SQLite does (sync/apply-pull.ts). A later migration adding a foreign key that is
// not deferrable fails here. PostgreSQL only: SQLite defers any foreign key by a pragma.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { postgresUrl, testDialects } from '../../test/harness.ts'
import { connectDatabase } from './connect.ts'

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  test(`${dialect}: every foreign key of the migrated schema is deferrable and checked at once unless deferred`, async (t) => {
    const handle = await connectDatabase(await postgresUrl(), { poolSize: 1 })
    t.after(() => handle.close())
    const { rows } = await sql<{ name: string; deferrable: boolean; deferred: boolean }>`
      select c.relname || '.' || k.conname as name, k.condeferrable as deferrable, k.condeferred as deferred
      from pg_constraint k join pg_class c on c.oid = k.conrelid
      where k.contype = 'f' and c.relnamespace = current_schema()::regnamespace order by 1`.execute(handle.db)
    assert.ok(rows.length >= 10, `the schema's foreign keys (${rows.length})`)
    assert.deepEqual(
      rows.filter((r) => !r.deferrable || r.deferred).map((r) => r.name),
      [],
    )
  })
}
