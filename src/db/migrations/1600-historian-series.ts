import { sql, type Kysely } from 'kysely'
import { enableTenantRowSecurity, isPostgres } from '../row-level-security.ts'

/**
 * Issue 9, speed: samples keyed by an integer series and the timestamp instead of five text columns, and no
 * per-row foreign key. A series (org, site, instance, tag) is created once and looked up once per import; its
 * samples are narrow rows (series id, ts, value, text, quality, batch id). `org_id` stays on every row and leads
 * the keys like every tenant table's (the row-level security policy compares it per row on PostgreSQL). Deleting a series (its site or organisation
 * went) removes its samples by trigger, once per series rather than a foreign-key check per sample.
 * Existing samples are carried over; historian_samples is dropped.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db)
  // The id is unique across organisations (an identity on PostgreSQL, where org_id leads the primary key like every
  // tenant table's; SQLite's integer primary key, i.e. the rowid).
  let series = db.schema
    .createTable('historian_series')
    .addColumn('id', 'integer', (c) => (pg ? c.notNull().generatedByDefaultAsIdentity() : c.primaryKey()))
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('tag_key', 'text', (c) => c.notNull())
    .addUniqueConstraint('historian_series_key', ['org_id', 'site_code', 'instance_id', 'tag_key'])
    .addForeignKeyConstraint('historian_series_site_fk', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], (c) => c.onDelete('cascade'))
  if (pg) series = series.addPrimaryKeyConstraint('historian_series_pk', ['org_id', 'id'])
  await series.execute()

  // A sample is visible only while its batch is complete (reads join historian_batches).
  let points = db.schema
    .createTable('historian_points')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('series_id', 'integer', (c) => c.notNull())
    .addColumn('ts', 'bigint', (c) => c.notNull())
    .addColumn('value', 'double precision')
    .addColumn('text', 'text')
    .addColumn('quality', 'smallint', (c) => c.notNull())
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('historian_points_pk', ['org_id', 'series_id', 'ts'])
  if (!pg) points = points.modifyEnd(sql`without rowid`)
  await points.execute()

  await sql`insert into historian_series (org_id, site_code, instance_id, tag_key)
    select distinct org_id, site_code, instance_id, tag_key from historian_samples`.execute(db)
  await sql`insert into historian_points (org_id, series_id, ts, value, text, quality, batch_id)
    select h.org_id, s.id, h.ts, h.value, h.text, h.quality, h.batch_id from historian_samples h
    join historian_series s on s.org_id = h.org_id and s.site_code = h.site_code and s.instance_id = h.instance_id and s.tag_key = h.tag_key`.execute(db)
  await db.schema.createIndex('historian_points_batch_idx').on('historian_points').columns(['org_id', 'batch_id']).execute()
  await db.schema.dropTable('historian_samples').execute()

  // force=true: the batch's samples wait here until the transaction that completes the batch. Rows of imports in
  // progress only (a running batch at start-up is abandoned), so nothing is carried over.
  await db.schema.dropTable('historian_staging').execute()
  await db.schema
    .createTable('historian_staging')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addColumn('series_id', 'integer', (c) => c.notNull())
    .addColumn('ts', 'bigint', (c) => c.notNull())
    .addColumn('value', 'double precision')
    .addColumn('text', 'text')
    .addColumn('quality', 'smallint', (c) => c.notNull())
    .addPrimaryKeyConstraint('historian_staging_pk', ['org_id', 'batch_id', 'series_id', 'ts'])
    .execute()

  if (pg) {
    await sql`create or replace function historian_series_gone() returns trigger language plpgsql as $$
      begin
        delete from historian_points where org_id = old.org_id and series_id = old.id;
        delete from historian_staging where org_id = old.org_id and series_id = old.id;
        return old;
      end $$`.execute(db)
    await sql`create trigger historian_series_gone after delete on historian_series for each row execute function historian_series_gone()`.execute(db)
    for (const table of ['historian_series', 'historian_points', 'historian_staging']) await enableTenantRowSecurity(db, table)
  } else {
    await sql`create trigger historian_series_gone after delete on historian_series for each row begin
      delete from historian_points where org_id = old.org_id and series_id = old.id;
      delete from historian_staging where org_id = old.org_id and series_id = old.id;
    end`.execute(db)
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('historian_samples')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('tag_key', 'text', (c) => c.notNull())
    .addColumn('ts', 'bigint', (c) => c.notNull())
    .addColumn('value', 'double precision')
    .addColumn('text', 'text')
    .addColumn('quality', 'smallint', (c) => c.notNull())
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('historian_samples_pk', ['org_id', 'site_code', 'instance_id', 'tag_key', 'ts'])
    .addForeignKeyConstraint('historian_samples_site_fk', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], (c) => c.onDelete('cascade'))
    .execute()
  await db.schema.createIndex('historian_samples_batch_idx').on('historian_samples').columns(['org_id', 'batch_id']).execute()
  await sql`insert into historian_samples (org_id, site_code, instance_id, tag_key, ts, value, text, quality, batch_id)
    select s.org_id, s.site_code, s.instance_id, s.tag_key, p.ts, p.value, p.text, p.quality, p.batch_id
    from historian_points p join historian_series s on s.id = p.series_id`.execute(db)
  await db.schema.dropTable('historian_points').execute()
  await db.schema.dropTable('historian_staging').execute()
  await db.schema
    .createTable('historian_staging')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('tag_key', 'text', (c) => c.notNull())
    .addColumn('ts', 'bigint', (c) => c.notNull())
    .addColumn('value', 'double precision')
    .addColumn('text', 'text')
    .addColumn('quality', 'smallint', (c) => c.notNull())
    .addPrimaryKeyConstraint('historian_staging_pk', ['org_id', 'batch_id', 'instance_id', 'tag_key', 'ts'])
    .execute()
  await db.schema.dropTable('historian_series').execute()
  if (isPostgres(db)) {
    await sql`drop function if exists historian_series_gone()`.execute(db)
    for (const table of ['historian_samples', 'historian_staging']) await enableTenantRowSecurity(db, table)
  }
}
