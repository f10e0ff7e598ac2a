import { sql, type Kysely, type RawBuilder } from 'kysely'
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
  /**
   * Rows recorded only when the column holds none of these values (a historian batch while it is still being written
   * or while it is open to a gateway's pushes is not, nor its delete: the peer never saw it).
   */
  only?: { column: string; not: readonly string[] }
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
  { name: 'historian_batches', direction: 'up', siteColumn: 'site_code', key: ['id'], only: { column: 'status', not: ['running', 'open'] } },
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
    for (const suffix of pg ? ['write', 'insert', 'update', 'delete'] : ['insert', 'update', 'rekey', 'delete']) {
      await sql`drop trigger if exists ${sql.id(`link_${name}_${suffix}`)}${pg ? sql` on ${sql.table(name)}` : sql``}`.execute(db)
      // PostgreSQL: each statement-level trigger runs its own function of the same name.
      if (pg && suffix !== 'write') await sql`drop function if exists ${sql.id(`link_${name}_${suffix}`)}()`.execute(db)
    }
  }
  if (pg) await sql`drop function if exists link_record()`.execute(db)
}

/**
 * A row's key as the triggers write link_outbox.row_key, over the row `ref` (NEW, OLD, an alias or a quoted table
 * name): JSON.stringify's text (no spaces), its elements the columns' JSON text as in the row's image, so both dialects
 * store the same key and a query can find a row's changes by it.
 */
export function rowKeySql(pg: boolean, key: readonly string[], ref: string): RawBuilder<unknown> {
  return sql.raw(
    pg ? `'[' || ${key.map((c) => `to_jsonb(${ref}."${c}")::text`).join(` || ',' || `)} || ']'` : `json_array(${key.map((c) => `${ref}."${c}"`).join(', ')})`,
  )
}

const notIn = (values: readonly string[]) => sql.join(values.map((v) => sql.lit(v)))

async function installSqlite(db: Kysely<unknown>, table: LinkedTable): Promise<void> {
  const { rows } = await sql<{ name: string }>`select name from pragma_table_info(${table.name}) order by cid`.execute(db)
  const image = (ref: 'NEW' | 'OLD') => sql.raw(`json_object(${rows.map((c) => `'${c.name}', ${ref}."${c.name}"`).join(', ')})`)
  const key = (ref: 'NEW' | 'OLD') => rowKeySql(false, table.key, ref)
  const site = (ref: 'NEW' | 'OLD') => sql.raw(table.siteColumn === null ? `''` : `${ref}."${table.siteColumn}"`)
  const name = sql.lit(table.name)
  const record = (ref: 'NEW' | 'OLD', op: 'upsert' | 'delete') => sql`
    insert into link_outbox (org_id, table_name, site_code, row_key, op, "row", base, origin, at)
    values (${sql.raw(ref)}.org_id, ${name}, ${site(ref)}, ${key(ref)}, ${sql.lit(op)}, ${image(ref)},
      (select version from link_base b where b.org_id = ${sql.raw(ref)}.org_id and b.table_name = ${name} and b.row_key = ${key(ref)}),
      (select origin from link_apply_origin), cast((julianday('now') - 2440587.5) * 86400000 as integer));`
  const only = (ref: 'NEW' | 'OLD') =>
    table.only === undefined ? sql`` : sql` when ${sql.raw(ref)}.${sql.id(table.only.column)} not in (${notIn(table.only.not)})`
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
  // Statement-level triggers with transition tables (issue 29): one insert into the outbox per statement, whatever
  // its row count, with the key and site written out per table. PostgreSQL takes a transition table only on a
  // single-event trigger, hence one per event. Rows are recorded in the order the statement produced them.
  await sql`drop function if exists link_record() cascade`.execute(db)
  for (const table of tables) {
    const t = sql.table(table.name)
    const name = sql.lit(table.name)
    // The key as JSON.stringify builds it (no spaces), so both dialects store the same row_key text; its elements
    // are the columns' JSON text, as in the row's image. The image itself is built once per row (to_jsonb(r)).
    const key = rowKeySql(true, table.key, 'r')
    const site = sql.raw(table.siteColumn === null ? `''` : `r."${table.siteColumn}"`)
    const only = (ref: string) => (table.only === undefined ? sql`true` : sql`${sql.raw(ref)}.${sql.id(table.only.column)} not in (${notIn(table.only.not)})`)
    const record = (rows: 'new_rows' | 'old_rows', op: 'upsert' | 'delete', where: ReturnType<typeof sql>) => sql`
      insert into link_outbox (org_id, table_name, site_code, row_key, op, "row", base, origin, at)
      select r.org_id, ${name}, ${site}, ${key}, ${sql.lit(op)}, to_jsonb(r)::text,
        (select version from link_base b where b.org_id = r.org_id and b.table_name = ${name} and b.row_key = ${key}),
        link_origin, link_at
      from ${sql.raw(rows)} r
      where ${where};`
    // Key columns are never null (primary key): `=` lets the planner hash the old rows against the new.
    const sameKey = sql.raw(['org_id', ...table.key].map((c) => `n."${c}" = r."${c}"`).join(' and '))
    const bodies = {
      insert: record('new_rows', 'upsert', only('r')),
      // A key that changes (none does through the API today) is a delete of the old key and an upsert of the new.
      update: sql`${record('old_rows', 'delete', sql`not exists (select 1 from new_rows n where ${sameKey})`)}
        ${record('new_rows', 'upsert', only('r'))}`,
      // A delete cascading from the organisation's own deletion records nothing: the organisation and its outbox are gone.
      delete: record('old_rows', 'delete', sql`${only('r')} and exists (select 1 from orgs o where o.id = r.org_id)`),
    }
    for (const suffix of ['write', 'insert', 'update', 'delete'])
      await sql`drop trigger if exists ${sql.id(`link_${table.name}_${suffix}`)} on ${t}`.execute(db)
    for (const [event, body] of Object.entries(bodies)) {
      const fn = sql.id(`link_${table.name}_${event}`)
      await sql`
        create or replace function ${fn}() returns trigger language plpgsql as $fn$
        declare
          link_origin text := coalesce(current_setting(${sql.lit(APPLY_ORIGIN_SETTING)}, true), '');
          link_at bigint := (extract(epoch from clock_timestamp()) * 1000)::bigint;
        begin
          ${body}
          return null;
        end
        $fn$`.execute(db)
      const transition =
        event === 'insert' ? sql`new table as new_rows` : event === 'delete' ? sql`old table as old_rows` : sql`old table as old_rows new table as new_rows`
      await sql`create trigger ${fn} after ${sql.raw(event)} on ${t} referencing ${transition} for each statement execute function ${fn}()`.execute(db)
    }
  }
}
