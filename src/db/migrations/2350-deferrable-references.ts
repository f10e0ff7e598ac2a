import { sql, type Kysely } from 'kysely'
import { isPostgres } from '../row-level-security.ts'

/**
 * Issue 26, a site server on PostgreSQL (ARCHITECTURE.md § Fleet link): a page of the cloud's changes may delete a
 * controller before the conflict record that removes the site's instance still pointing at it, so the pull checks
 * references at commit (`set constraints all deferred`), as SQLite's `defer_foreign_keys` does. PostgreSQL defers only
 * a constraint declared deferrable: every foreign key becomes `deferrable initially immediate` (checked at once, as
 * before, unless a transaction asks). A later migration that adds a foreign key declares it so
 * (src/db/migrations.test.ts checks). SQLite: nothing to do.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return
  for (const fk of await foreignKeys(db, false))
    await sql`alter table ${sql.table(fk.table)} alter constraint ${sql.ref(fk.name)} deferrable initially immediate`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return
  for (const fk of await foreignKeys(db, true)) await sql`alter table ${sql.table(fk.table)} alter constraint ${sql.ref(fk.name)} not deferrable`.execute(db)
}

async function foreignKeys(db: Kysely<unknown>, deferrable: boolean): Promise<Array<{ table: string; name: string }>> {
  const { rows } = await sql<{ table: string; name: string }>`select c.relname as "table", k.conname as name
    from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
    where k.contype = 'f' and k.condeferrable = ${deferrable} and n.nspname = current_schema()
    order by c.relname, k.conname`.execute(db)
  return rows
}
