import { sql, type Kysely } from 'kysely'
import { enableTenantRowSecurity, isPostgres, tenantTables } from '../row-level-security.ts'

/**
 * PostgreSQL row-level security on every tenant table (defence in depth behind the `org_id` filters of the
 * stores; README § PostgreSQL). SQLite has no such feature: nothing to do there. A later migration that adds a
 * tenant table calls `enableTenantRowSecurity` itself (test/hardening/row-level-security.test.ts checks them all).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return
  for (const table of await tenantTables(db)) await enableTenantRowSecurity(db, table)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return
  for (const table of await tenantTables(db)) {
    await sql`drop policy if exists tenant on ${sql.table(table)}`.execute(db)
    await sql`alter table ${sql.table(table)} no force row level security`.execute(db)
    await sql`alter table ${sql.table(table)} disable row level security`.execute(db)
  }
}
