import { sql, type Kysely } from 'kysely'
import { enableTenantRowSecurity, isPostgres, SCOPE_SETTING, tenantTables } from '../row-level-security.ts'

/**
 * Issue 9, import speed as the service role: every tenant policy reads the scope setting in a sub-select, which
 * PostgreSQL evaluates once a statement, instead of calling `current_setting` twice for every row a statement checks
 * (a historian import's `INSERT … SELECT` checks millions). Who sees and writes what is unchanged. SQLite has no
 * row-level security: nothing to do there.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return
  for (const table of await tenantTables(db)) await enableTenantRowSecurity(db, table)
}

/** Back to migration 1200's policy, the setting read for every row. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return
  const scope = sql`current_setting(${sql.lit(SCOPE_SETTING)}, true)`
  const visible = sql`org_id = ${scope} or ${scope} = '*'`
  for (const table of await tenantTables(db)) {
    await sql`drop policy if exists tenant on ${sql.table(table)}`.execute(db)
    await sql`create policy tenant on ${sql.table(table)} using (${visible}) with check (${visible})`.execute(db)
  }
}
