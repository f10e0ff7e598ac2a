import { sql, type Kysely } from 'kysely'
import type { Dialect } from './connect.ts'
import { isPostgres } from './row-level-security.ts'
import type { Database } from './schema.ts'

/**
 * The tables the fleet link carries (issue 26; ARCHITECTURE.md § Fleet link) and the triggers that record their
 * changes in `link_outbox`, in the same transaction as the change, on both dialects. No store function can forget
 * to record a change, and one made while the link is down waits in the outbox.
 *
 * - `down`: the cloud's (site records, controllers, instances, the electrical network; conflicts the cloud recorded).
 * - `up`: the site's (alarms and their events, history and shelves; historian batches; the site's audit trail).
 * - `both`: forwarded alarm commands, created in the cloud and settled on the site.
 *
 * `key` is the primary key after `org_id` (src/modules/fleet/outbox/triggers.test.ts holds it to the schema), and
 * `siteColumn` the column naming the row's site (null: organisation-wide, recorded with site '').
 */
export interface LinkedTable {
  name: string
  direction: 'down' | 'up' | 'both'
  siteColumn: string | null
  key: readonly string[]
  /** Rows recorded only when this holds (a historian batch while it is still being written is not, nor its delete). */
  only?: { column: string; not: string }
}

export const LINKED_TABLES: readonly LinkedTable[] = [
  { name: 'sites', direction: 'down', siteColumn: 'code', key: ['code'] },
  { name: 'controllers', direction: 'down', siteColumn: 'site_code', key: ['site_code', 'id'] },
  { name: 'instances', direction: 'down', siteColumn: 'site_code', key: ['site_code', 'id'] },
  { name: 'historian_tag_marks', direction: 'down', siteColumn: 'site_code', key: ['site_code', 'instance_id', 'tag_key'] },
  { name: 'electrical_nodes', direction: 'down', siteColumn: 'site_code', key: ['site_code', 'id'] },
  { name: 'electrical_edges', direction: 'down', siteColumn: 'site_code', key: ['site_code', 'source_id', 'target_id', 'edge_type'] },
  { name: 'link_conflicts', direction: 'down', siteColumn: 'site_code', key: ['id'] },
  { name: 'link_commands', direction: 'both', siteColumn: 'site_code', key: ['id'] },
  { name: 'alarms', direction: 'up', siteColumn: 'site_code', key: ['site_code', 'id'] },
  { name: 'alarm_events', direction: 'up', siteColumn: 'site_code', key: ['site_code', 'event_id'] },
  { name: 'alarm_history', direction: 'up', siteColumn: 'site_code', key: ['site_code', 'alarm_id', 'seq'] },
  { name: 'alarm_shelves', direction: 'up', siteColumn: 'site_code', key: ['site_code', 'alarm_id', 'seq'] },
  { name: 'historian_batches', direction: 'up', siteColumn: 'site_code', key: ['id'], only: { column: 'status', not: 'running' } },
  { name: 'audit_events', direction: 'up', siteColumn: null, key: ['id'] },
]

/** What the cloud sends down to a site server: its own tables, and the forwarded commands (ARCHITECTURE.md § Fleet link). */
export const PULLED_TABLES: readonly string[] = LINKED_TABLES.filter((t) => t.direction !== 'up').map((t) => t.name)

/** What a site server sends up: everything linked but the cloud's own conflict records (sync/validate.ts agrees). */
export const PUSHED_TABLES: readonly string[] = LINKED_TABLES.filter((t) => t.name !== 'link_conflicts').map((t) => t.name)

/** The transaction-local setting that names the peer whose change the link is applying (PostgreSQL). */
export const APPLY_ORIGIN_SETTING = 'sitegrid.link_origin'

/**
 * Runs `fn` with the outbox recording its changes as coming from `origin` (the peer whose change is applied), so
 * that they are not sent back to it. Call it inside a transaction: on PostgreSQL the setting is transaction-local;
 * on SQLite the origin is a row the triggers read, written inside the transaction (no other connection sees it)
 * and reset before it commits.
 */
export async function withApplyOrigin<T>(trx: Kysely<Database>, dialect: Dialect, origin: string, fn: () => Promise<T>): Promise<T> {
  const set = (value: string) =>
    dialect === 'postgres'
      ? sql`select set_config(${APPLY_ORIGIN_SETTING}, ${value}, true)`.execute(trx)
      : sql`update link_apply_origin set origin = ${value}`.execute(trx)
  await set(origin)
  // Reset on success only: a failed transaction rolls the setting back with everything else (and PostgreSQL would
  // refuse another statement in it).
  const result = await fn()
  await set('')
  return result
}

/**
 * (Re)creates the outbox triggers of every linked table the schema holds so far. A migration that changes a linked
 * table's columns, or creates one, calls it again: on SQLite a trigger names each column it copies (PostgreSQL's copies
 * the whole row); an earlier migration skips the tables a later one creates.
 */
export async function installLinkTriggers(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db)
  const { rows } = await (pg
    ? sql<{ name: string }>`select tablename as name from pg_tables where schemaname = current_schema()`
    : sql<{ name: string }>`select name from sqlite_master where type = 'table'`
  ).execute(db)
  const existing = new Set(rows.map((r) => r.name))
  const tables = LINKED_TABLES.filter((t) => existing.has(t.name))
  if (pg) {
    await installPostgres(db, tables)
    return
  }
  for (const table of tables) await installSqlite(db, table)
}

export async function dropLinkTriggers(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db)
  for (const { name } of LINKED_TABLES) {
    for (const suffix of pg ? ['write', 'delete'] : ['insert', 'update', 'rekey', 'delete']) {
      await sql`drop trigger if exists ${sql.id(`link_${name}_${suffix}`)}${pg ? sql` on ${sql.table(name)}` : sql``}`.execute(db)
    }
  }
  if (pg) await sql`drop function if exists link_record()`.execute(db)
}

async function installSqlite(db: Kysely<unknown>, table: LinkedTable): Promise<void> {
  const { rows } = await sql<{ name: string }>`select name from pragma_table_info(${table.name}) order by cid`.execute(db)
  const image = (ref: 'NEW' | 'OLD') => sql.raw(`json_object(${rows.map((c) => `'${c.name}', ${ref}."${c.name}"`).join(', ')})`)
  const key = (ref: 'NEW' | 'OLD') => sql.raw(`json_array(${table.key.map((c) => `${ref}."${c}"`).join(', ')})`)
  const site = (ref: 'NEW' | 'OLD') => sql.raw(table.siteColumn === null ? `''` : `${ref}."${table.siteColumn}"`)
  const name = sql.lit(table.name)
  const record = (ref: 'NEW' | 'OLD', op: 'upsert' | 'delete') => sql`
    insert into link_outbox (org_id, table_name, site_code, row_key, op, "row", base, origin, at)
    values (${sql.raw(ref)}.org_id, ${name}, ${site(ref)}, ${key(ref)}, ${sql.lit(op)}, ${image(ref)},
      (select version from link_base b where b.org_id = ${sql.raw(ref)}.org_id and b.table_name = ${name} and b.row_key = ${key(ref)}),
      (select origin from link_apply_origin), cast((julianday('now') - 2440587.5) * 86400000 as integer));`
  const only = (ref: 'NEW' | 'OLD') =>
    table.only === undefined ? sql`` : sql` when ${sql.raw(ref)}.${sql.id(table.only.column)} <> ${sql.lit(table.only.not)}`
  const trigger = (suffix: string) => sql.id(`link_${table.name}_${suffix}`)
  const t = sql.table(table.name)
  for (const suffix of ['insert', 'update', 'rekey', 'delete']) await sql`drop trigger if exists ${trigger(suffix)}`.execute(db)
  await sql`create trigger ${trigger('insert')} after insert on ${t}${only('NEW')} begin ${record('NEW', 'upsert')} end`.execute(db)
  // A key that changes (none does through the API today) is a delete of the old key and an upsert of the new.
  const rekeyed = sql.raw(table.key.map((c) => `OLD."${c}" is not NEW."${c}"`).join(' or '))
  await sql`create trigger ${trigger('rekey')} after update on ${t} when ${rekeyed} begin ${record('OLD', 'delete')} end`.execute(db)
  await sql`create trigger ${trigger('update')} after update on ${t}${only('NEW')} begin ${record('NEW', 'upsert')} end`.execute(db)
  // A delete cascading from the organisation's own deletion records nothing: the organisation and its outbox are gone.
  const orgRemains = sql`exists (select 1 from orgs o where o.id = OLD.org_id)`
  const whenDeleted = table.only === undefined ? sql` when ${orgRemains}` : sql`${only('OLD')} and ${orgRemains}`
  await sql`create trigger ${trigger('delete')} after delete on ${t}${whenDeleted} begin ${record('OLD', 'delete')} end`.execute(db)
}

async function installPostgres(db: Kysely<unknown>, tables: readonly LinkedTable[]): Promise<void> {
  // One function for every table: TG_ARGV[0] is the site column ('' for none), TG_ARGV[1] the key columns.
  // The key is built as JSON.stringify builds it (no spaces), so both dialects store the same row_key text.
  await sql`
    create or replace function link_record() returns trigger language plpgsql as $fn$
    declare
      img jsonb;
      old_key text;
      new_key text;
      site text;
      origin text := coalesce(current_setting(${sql.lit(APPLY_ORIGIN_SETTING)}, true), '');
      now_ms bigint := (extract(epoch from clock_timestamp()) * 1000)::bigint;
    begin
      if TG_OP in ('UPDATE', 'DELETE') then
        select '[' || string_agg((to_jsonb(OLD) -> k)::text, ',' order by ord) || ']' into old_key
          from unnest(string_to_array(TG_ARGV[1], ',')) with ordinality as u(k, ord);
      end if;
      if TG_OP in ('INSERT', 'UPDATE') then
        select '[' || string_agg((to_jsonb(NEW) -> k)::text, ',' order by ord) || ']' into new_key
          from unnest(string_to_array(TG_ARGV[1], ',')) with ordinality as u(k, ord);
      end if;
      -- A delete cascading from the organisation's own deletion records nothing: the organisation and its outbox are gone.
      if TG_OP = 'DELETE' and not exists (select 1 from orgs o where o.id = OLD.org_id) then
        return null;
      end if;
      if TG_OP = 'DELETE' or (TG_OP = 'UPDATE' and old_key is distinct from new_key) then
        img := to_jsonb(OLD);
        site := case when TG_ARGV[0] = '' then '' else img ->> TG_ARGV[0] end;
        insert into link_outbox (org_id, table_name, site_code, row_key, op, "row", base, origin, at)
        values (OLD.org_id, TG_TABLE_NAME, site, old_key, 'delete', img::text,
          (select version from link_base b where b.org_id = OLD.org_id and b.table_name = TG_TABLE_NAME and b.row_key = old_key),
          origin, now_ms);
      end if;
      if TG_OP in ('INSERT', 'UPDATE') then
        img := to_jsonb(NEW);
        site := case when TG_ARGV[0] = '' then '' else img ->> TG_ARGV[0] end;
        insert into link_outbox (org_id, table_name, site_code, row_key, op, "row", base, origin, at)
        values (NEW.org_id, TG_TABLE_NAME, site, new_key, 'upsert', img::text,
          (select version from link_base b where b.org_id = NEW.org_id and b.table_name = TG_TABLE_NAME and b.row_key = new_key),
          origin, now_ms);
      end if;
      return null;
    end
    $fn$`.execute(db)
  for (const table of tables) {
    const t = sql.table(table.name)
    const args = sql`${sql.lit(table.siteColumn ?? '')}, ${sql.lit(table.key.join(','))}`
    const only = (ref: 'NEW' | 'OLD') =>
      table.only === undefined ? sql`` : sql` when (${sql.raw(ref)}.${sql.id(table.only.column)} <> ${sql.lit(table.only.not)})`
    await sql`drop trigger if exists ${sql.id(`link_${table.name}_write`)} on ${t}`.execute(db)
    await sql`drop trigger if exists ${sql.id(`link_${table.name}_delete`)} on ${t}`.execute(db)
    await sql`create trigger ${sql.id(`link_${table.name}_write`)} after insert or update on ${t} for each row${only('NEW')}
      execute function link_record(${args})`.execute(db)
    await sql`create trigger ${sql.id(`link_${table.name}_delete`)} after delete on ${t} for each row${only('OLD')} execute function link_record(${args})`.execute(
      db,
    )
  }
}
