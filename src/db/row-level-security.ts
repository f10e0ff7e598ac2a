import { PostgresAdapter, sql, type Kysely } from 'kysely'

/** The session setting that carries the tenant scope (tenant-scope.ts; set by connect.ts on PostgreSQL). */
export const SCOPE_SETTING = 'sitegrid.org_id'

export function isPostgres<DB>(db: Kysely<DB>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}

/** Tables of the current schema with an `org_id` column: the tenant tables row-level security covers. */
export async function tenantTables<DB>(db: Kysely<DB>): Promise<string[]> {
  const { rows } = await sql<{ table_name: string }>`
    select c.table_name from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema() and c.column_name = 'org_id' and t.table_type = 'BASE TABLE'
    order by c.table_name`.execute(db)
  return rows.map((r) => r.table_name)
}

/**
 * PostgreSQL only: rows of `table` are visible and writable only in their organisation's scope or the system
 * scope `*`, for every role including the table owner (FORCE). A migration that adds a tenant table calls this.
 */
export async function enableTenantRowSecurity<DB>(db: Kysely<DB>, table: string): Promise<void> {
  const t = sql.table(table)
  // The scope in a sub-select is read once a statement (an InitPlan), not once a row: a bulk insert's check is then
  // text comparisons only, with no function call a row (migration 2000).
  const scope = sql`(select current_setting(${sql.lit(SCOPE_SETTING)}, true))`
  const visible = sql`org_id = ${scope} or ${scope} = '*'`
  await sql`alter table ${t} enable row level security`.execute(db)
  await sql`alter table ${t} force row level security`.execute(db)
  await sql`drop policy if exists tenant on ${t}`.execute(db)
  await sql`create policy tenant on ${t} using (${visible}) with check (${visible})`.execute(db)
}

/**
 * PostgreSQL only: lets the service's role (`SITEGRID_DATABASE_APP_URL`'s user; neither owner nor BYPASSRLS)
 * read and write every table but the migrator's own, and use the sequences. Run after every migration, by every
 * process that starts: it grants only what the role lacks, under an advisory lock, because two GRANTs on one table at
 * once fail ("tuple concurrently updated") and the processes of a cell start together.
 */
export async function grantAppRole<DB>(db: Kysely<DB>, role: string): Promise<void> {
  const lacking = async (q: Kysely<DB>) => {
    const { rows } = await sql<{ relname: string; relkind: string }>`
      select c.relname, c.relkind from pg_class c
      where c.relnamespace = current_schema()::regnamespace
        and ((c.relkind in ('r', 'p') and c.relname not like 'kysely_migration%'
              and not (has_table_privilege(${role}, c.oid, 'SELECT') and has_table_privilege(${role}, c.oid, 'INSERT')
                       and has_table_privilege(${role}, c.oid, 'UPDATE') and has_table_privilege(${role}, c.oid, 'DELETE')))
          or (c.relkind = 'S' and not (has_sequence_privilege(${role}, c.oid, 'USAGE') and has_sequence_privilege(${role}, c.oid, 'SELECT'))))
      order by c.relname`.execute(q)
    return rows
  }
  if ((await lacking(db)).length === 0) return
  const r = sql.id(role)
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('sitegrid.grant-app-role'))`.execute(trx)
    for (const { relname, relkind } of await lacking(trx)) {
      if (relkind === 'S') await sql`grant usage, select on sequence ${sql.table(relname)} to ${r}`.execute(trx)
      else await sql`grant select, insert, update, delete on ${sql.table(relname)} to ${r}`.execute(trx)
    }
  })
}

/** The user name of a postgres:// URL (the role `serve` runs as). */
export function roleOfUrl(url: string): string {
  const user = decodeURIComponent(new URL(url).username)
  if (!user) throw new TypeError('SITEGRID_DATABASE_APP_URL must name its user')
  return user
}

/**
 * PostgreSQL only, after every migration run: any tenant table still without its forced policy gets it, so a
 * table added by a later migration that forgot `enableTenantRowSecurity` is still closed. Serialised by an
 * advisory lock (N processes may migrate at once); touches nothing when all tables are covered.
 */
export async function secureTenantTables<DB>(db: Kysely<DB>): Promise<string[]> {
  const missing = async (trx: Kysely<DB>) => {
    const { rows } = await sql<{ relname: string }>`
      select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind = 'r'
        and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'org_id' and not a.attisdropped)
        and (not c.relrowsecurity or not c.relforcerowsecurity
             or not exists (select 1 from pg_policies p where p.schemaname = n.nspname and p.tablename = c.relname and p.policyname = 'tenant'))
      order by c.relname`.execute(trx)
    return rows.map((r) => r.relname)
  }
  if ((await missing(db)).length === 0) return []
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('sitegrid.row-level-security'))`.execute(trx)
    const tables = await missing(trx)
    for (const table of tables) await enableTenantRowSecurity(trx, table)
    return tables
  })
}
