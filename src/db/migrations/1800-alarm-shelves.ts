import { sql, type Kysely } from 'kysely'
import { enableTenantRowSecurity, isPostgres } from '../row-level-security.ts'

export async function up(db: Kysely<unknown>): Promise<void> {
  // Issue 8: the shelve windows of every alarm, so that an event is judged by the window its occurred-at falls in,
  // even when it arrives after the shelve ended (by expiry, unshelve or out of service). `ends_at` is the planned
  // expiry while the shelve is in force and the real end once it ended early. `tag_key` is the alarm's
  // `activeKey(instance_id, condition)`, so a late event finds the window of a tag whose alarm has since closed.
  await db.schema
    .createTable('alarm_shelves')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('alarm_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('tag_key', 'text', (c) => c.notNull())
    .addColumn('starts_at', 'bigint', (c) => c.notNull())
    .addColumn('ends_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('alarm_shelves_pk', ['org_id', 'site_code', 'alarm_id', 'seq'])
    .addForeignKeyConstraint('alarm_shelves_alarm_fk', ['org_id', 'site_code', 'alarm_id'], 'alarms', ['org_id', 'site_code', 'id'], (fk) =>
      fk.onDelete('cascade'),
    )
    .execute()
  // Ingestion reads the windows that ended after a batch's earliest event: few rows, whatever the site's history.
  await db.schema.createIndex('alarm_shelves_site_ends').on('alarm_shelves').columns(['org_id', 'site_code', 'ends_at']).execute()
  // Shelves in force when this migration runs: their window starts at the alarm's latest `shelved` transition.
  await sql`insert into alarm_shelves (org_id, site_code, alarm_id, seq, tag_key, starts_at, ends_at)
    select a.org_id, a.site_code, a.id, h.seq, length(a.instance_id) || ':' || a.instance_id || a.condition, h.at, a.shelved_until
    from alarms a join alarm_history h on h.org_id = a.org_id and h.site_code = a.site_code and h.alarm_id = a.id
    where a.shelved_until is not null and h.action = 'shelved'
      and h.seq = (select max(x.seq) from alarm_history x where x.org_id = a.org_id and x.site_code = a.site_code and x.alarm_id = a.id and x.action = 'shelved')`.execute(
    db,
  )
  // A tenant table added after 1200-row-level-security: it turns row-level security on itself.
  if (isPostgres(db)) await enableTenantRowSecurity(db, 'alarm_shelves')
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('alarm_shelves').execute()
}
