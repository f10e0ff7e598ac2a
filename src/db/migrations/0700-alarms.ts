import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per alarm occurrence: raised by an activation, open until it is back to normal and neither shelved
  // nor out of service. `active_key` is the length-prefixed `instance_id` + `condition` while open and NULL once closed; the plain
  // unique index below therefore allows at most one open alarm per instance and condition on both dialects
  // (many NULLs are allowed by SQLite and PostgreSQL alike), whatever the timing of two gateways' events.
  await db.schema
    .createTable('alarms')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('condition', 'text', (c) => c.notNull())
    .addColumn('priority', 'text', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('value', 'double precision')
    .addColumn('limit_value', 'double precision')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull())
    .addColumn('is_acknowledged', 'integer', (c) => c.notNull())
    .addColumn('is_out_of_service', 'integer', (c) => c.notNull())
    .addColumn('shelved_until', 'bigint')
    .addColumn('active_key', 'text')
    .addColumn('activation_count', 'integer', (c) => c.notNull())
    .addColumn('raised_at', 'bigint', (c) => c.notNull())
    .addColumn('last_event_at', 'bigint', (c) => c.notNull())
    .addColumn('changed_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('alarms_pk', ['org_id', 'site_code', 'id'])
    .addForeignKeyConstraint('alarms_site_fk', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], (fk) => fk.onDelete('cascade'))
    .execute()
  await db.schema.createIndex('alarms_open_unique').on('alarms').columns(['org_id', 'site_code', 'active_key']).unique().execute()
  await db.schema.createIndex('alarms_site_changed').on('alarms').columns(['org_id', 'site_code', 'changed_at', 'id']).execute()
  await db.schema.createIndex('alarms_instance_changed').on('alarms').columns(['org_id', 'site_code', 'instance_id', 'changed_at', 'id']).execute()
  await db.schema.createIndex('alarms_shelved_until').on('alarms').columns(['org_id', 'site_code', 'shelved_until']).execute()

  // Every event a gateway delivered, once: the primary key is the idempotency key of a resend.
  await db.schema
    .createTable('alarm_events')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('alarm_id', 'text')
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('condition', 'text', (c) => c.notNull())
    .addColumn('priority', 'text', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull())
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('value', 'double precision')
    .addColumn('limit_value', 'double precision')
    .addColumn('effect', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('alarm_events_pk', ['org_id', 'site_code', 'event_id'])
    .addForeignKeyConstraint('alarm_events_site_fk', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], (fk) => fk.onDelete('cascade'))
    .execute()
  await db.schema.createIndex('alarm_events_site_occurred').on('alarm_events').columns(['org_id', 'site_code', 'occurred_at']).execute()

  // Each transition of an alarm, numbered by the alarm's version: who, when, from which state to which.
  await db.schema
    .createTable('alarm_history')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('alarm_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('from_state', 'text', (c) => c.notNull())
    .addColumn('to_state', 'text', (c) => c.notNull())
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text', (c) => c.notNull())
    .addColumn('comment', 'text')
    .addColumn('event_id', 'text')
    .addPrimaryKeyConstraint('alarm_history_pk', ['org_id', 'site_code', 'alarm_id', 'seq'])
    .addForeignKeyConstraint('alarm_history_site_fk', ['org_id', 'site_code'], 'sites', ['org_id', 'code'], (fk) => fk.onDelete('cascade'))
    .addForeignKeyConstraint('alarm_history_alarm_fk', ['org_id', 'site_code', 'alarm_id'], 'alarms', ['org_id', 'site_code', 'id'], (fk) =>
      fk.onDelete('cascade'),
    )
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('alarm_history').execute()
  await db.schema.dropTable('alarm_events').execute()
  await db.schema.dropTable('alarms').execute()
}
