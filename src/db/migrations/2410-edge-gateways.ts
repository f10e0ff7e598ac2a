import { sql, type Kysely } from 'kysely'
import { enableTenantRowSecurity, isPostgres } from '../row-level-security.ts'

/**
 * Issue 30, edge gateways.
 *
 * Keys: a key may be restricted to one site (`site_code`) and to client networks (`networks`, CIDR blocks joined by
 * commas). Null: unrestricted, as every key minted before. No foreign key to `sites`: `api_keys` is a reference table
 * on Citus (db/distribution.ts), which cannot reference a distributed table; a key restricted to a site deleted since
 * reaches nothing.
 *
 * Gateway configuration: `edge_config_versions` counts the changes to a site's controllers and instances, bumped by
 * triggers in the transaction of the change (every write path: the API, the CLI, the fleet link, a tenant import), so
 * `GET …/edges/{edgeId}/config` answers an unchanged ETag with one primary-key read. The version is the time of the
 * last change in ms, or one more than the previous when two fall in the same ms: it only grows, also across a site
 * deleted and made again under the same code, so a gateway's old ETag never matches a newer configuration. A write to
 * a site being deleted (the cascade) bumps nothing: the row goes with its site.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('site_code', 'text').execute()
  await db.schema.alterTable('api_keys').addColumn('networks', 'text').execute()

  const pg = isPostgres(db)
  await db.schema
    .createTable('edge_config_versions')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('edge_config_versions_pk', ['org_id', 'site_code'])
    .addForeignKeyConstraint('edge_config_versions_site', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], (fk) => {
      const cascading = fk.onDelete('cascade')
      return pg ? cascading.deferrable().initiallyImmediate() : cascading
    })
    .execute()

  if (pg) {
    await enableTenantRowSecurity(db, 'edge_config_versions')
    await sql`
      create function edge_config_bump() returns trigger language plpgsql as $fn$
      declare
        r record;
        now_ms bigint := (extract(epoch from clock_timestamp()) * 1000)::bigint;
      begin
        if TG_OP = 'DELETE' then r := OLD; else r := NEW; end if;
        if exists (select 1 from sites s where s.org_id = r.org_id and s.code = r.site_code) then
          insert into edge_config_versions (org_id, site_code, version) values (r.org_id, r.site_code, now_ms)
          on conflict (org_id, site_code) do update set version = greatest(edge_config_versions.version + 1, now_ms);
        end if;
        return null;
      end
      $fn$`.execute(db)
    for (const table of CONFIG_TABLES)
      await sql`create trigger ${sql.id(`edge_config_${table}`)} after insert or update or delete on ${sql.table(table)}
        for each row execute function edge_config_bump()`.execute(db)
    return
  }
  // No `insert or ignore`: a trigger's conflict clause yields to the firing statement's (an upsert's), which aborts.
  for (const table of CONFIG_TABLES) {
    for (const [op, ref] of [
      ['insert', 'NEW'],
      ['update', 'NEW'],
      ['delete', 'OLD'],
    ] as const) {
      const r = sql.raw(ref)
      await sql`create trigger ${sql.id(`edge_config_${table}_${op}`)} after ${sql.raw(op)} on ${sql.table(table)}
        when exists (select 1 from sites s where s.org_id = ${r}.org_id and s.code = ${r}.site_code)
        begin
          insert into edge_config_versions (org_id, site_code, version) select ${r}.org_id, ${r}.site_code, 0
            where not exists (select 1 from edge_config_versions v where v.org_id = ${r}.org_id and v.site_code = ${r}.site_code);
          update edge_config_versions set version = max(version + 1, ${NOW_MS_SQLITE})
            where org_id = ${r}.org_id and site_code = ${r}.site_code;
        end`.execute(db)
    }
  }
}

const CONFIG_TABLES = ['controllers', 'instances'] as const
const NOW_MS_SQLITE = sql.raw(`cast((julianday('now') - 2440587.5) * 86400000 as integer)`)

export async function down(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db)
  for (const table of CONFIG_TABLES) {
    if (pg) await sql`drop trigger if exists ${sql.id(`edge_config_${table}`)} on ${sql.table(table)}`.execute(db)
    else for (const op of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.id(`edge_config_${table}_${op}`)}`.execute(db)
  }
  if (pg) await sql`drop function if exists edge_config_bump()`.execute(db)
  await db.schema.dropTable('edge_config_versions').execute()
  await db.schema.alterTable('api_keys').dropColumn('networks').execute()
  await db.schema.alterTable('api_keys').dropColumn('site_code').execute()
}
