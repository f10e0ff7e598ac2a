import { sql, type ColumnDefinitionBuilder, type Kysely } from 'kysely'
import { enableTenantRowSecurity, isPostgres } from '../row-level-security.ts'

/**
 * Issue 26, the fleet link (ARCHITECTURE.md § Fleet link): the tables both sides keep. The triggers that fill the
 * outbox are migration 2310.
 *
 * - `link_outbox`: every change to a linked table, recorded by the database in the same transaction as the change
 *   (an after-image, or the before-image of a delete). `seq` orders them on this server; on PostgreSQL `tx` (the
 *   writing transaction's id) makes the reader's cursor `(tx, seq)` safe against transactions that commit out of
 *   sequence order (modules/fleet/outbox). `origin` is '' for a change made here, or the peer a change came from.
 * - `link_base` (site): per row of a cloud-authoritative table, the cloud's outbox seq of the version the site holds;
 *   a site edit goes up with it, so the cloud can tell an edit of its latest version from one of an older one.
 * - `link_marks`: per peer, the last change of that peer applied here, and (cloud) a digest of it to detect a site
 *   restored from an old backup.
 * - `site_servers` (cloud): the registered site servers, their one-time enrolment code (hash) and link credential
 *   (verifier).
 * - `link_peer` (site): this server's enrolment: the cloud, its sealed credential, its outbox epoch.
 * - `link_conflicts`: a version that lost under the rule (the cloud wins), kept with who and when.
 * - `link_commands`: an alarm action taken in the cloud console on a linked site's alarm, forwarded to the site
 *   (it travels down as a row, and its result comes back up as the same row, settled).
 * - `link_chunks` (cloud): which chunks of a historian batch's samples arrived, so a cut transfer resumes.
 * - `link_apply_origin` (SQLite only): the origin the triggers record while the link applies a peer's change; PostgreSQL
 *   carries it in a transaction-local setting instead.
 */
const LINK_TABLES = ['link_outbox', 'link_base', 'link_marks', 'site_servers', 'link_peer', 'link_conflicts', 'link_chunks', 'link_commands']

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db)

  if (pg) {
    await sql`create table link_outbox (
      org_id text not null references orgs (id) on delete cascade,
      seq bigint generated always as identity,
      tx bigint not null default (pg_current_xact_id()::text::bigint),
      table_name text not null,
      site_code text not null,
      row_key text not null,
      op text not null,
      "row" text not null,
      base bigint,
      origin text not null default '',
      at bigint not null,
      primary key (org_id, seq)
    )`.execute(db)
    await sql`create index link_outbox_cursor on link_outbox (org_id, tx, seq)`.execute(db)
  } else {
    // SQLite: one writer at a time, so seq order is commit order and tx stays 0. AUTOINCREMENT: a seq is never reused,
    // even after the newest rows are deleted (a restored backup is the only way back, and the cloud detects it).
    await sql`create table link_outbox (
      seq integer primary key autoincrement,
      org_id text not null references orgs (id) on delete cascade,
      tx integer not null default 0,
      table_name text not null,
      site_code text not null,
      row_key text not null,
      op text not null,
      "row" text not null,
      base integer,
      origin text not null default '',
      at integer not null
    )`.execute(db)
    await sql`create index link_outbox_cursor on link_outbox (org_id, tx, seq)`.execute(db)
    await sql`create table link_apply_origin (origin text not null)`.execute(db)
    await sql`insert into link_apply_origin (origin) values ('')`.execute(db)
  }
  await sql`create index link_outbox_row on link_outbox (org_id, table_name, row_key, seq)`.execute(db)

  await db.schema
    .createTable('link_base')
    .addColumn('org_id', 'text', orgRef)
    .addColumn('table_name', 'text', (c) => c.notNull())
    .addColumn('row_key', 'text', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('link_base_pk', ['org_id', 'table_name', 'row_key'])
    .execute()

  await db.schema
    .createTable('link_marks')
    .addColumn('org_id', 'text', orgRef)
    .addColumn('peer', 'text', (c) => c.notNull())
    .addColumn('epoch', 'text', (c) => c.notNull())
    .addColumn('tx', 'bigint', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('digest', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('link_marks_pk', ['org_id', 'peer'])
    .execute()

  await db.schema
    .createTable('site_servers')
    .addColumn('org_id', 'text', orgRef)
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('sites', 'text', (c) => c.notNull())
    .addColumn('code_hash', 'text')
    .addColumn('code_expires_at', 'bigint')
    .addColumn('credential_verifier', 'text')
    .addColumn('epoch', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('enrolled_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('revoked_by', 'text')
    .addColumn('last_contact_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('peer_versions', 'text')
    .addColumn('backlog', 'text')
    .addPrimaryKeyConstraint('site_servers_pk', ['org_id', 'id'])
    .execute()
  await db.schema.createIndex('site_servers_verifier').unique().on('site_servers').columns(['org_id', 'credential_verifier']).execute()

  await db.schema
    .createTable('link_peer')
    .addColumn('org_id', 'text', orgRef)
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('cloud_url', 'text', (c) => c.notNull())
    .addColumn('sealed_credential', 'text')
    .addColumn('epoch', 'text', (c) => c.notNull())
    .addColumn('sites', 'text', (c) => c.notNull())
    .addColumn('enrolled_at', 'bigint', (c) => c.notNull())
    .addColumn('acked_seq', 'bigint', (c) => c.notNull())
    .addColumn('last_contact_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('peer_versions', 'text')
    .addPrimaryKeyConstraint('link_peer_pk', ['org_id'])
    .execute()

  await db.schema
    .createTable('link_conflicts')
    .addColumn('org_id', 'text', orgRef)
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('table_name', 'text', (c) => c.notNull())
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('row_key', 'text', (c) => c.notNull())
    .addColumn('losing_op', 'text', (c) => c.notNull())
    .addColumn('losing_row', 'text', (c) => c.notNull())
    .addColumn('losing_at', 'bigint', (c) => c.notNull())
    .addColumn('winning_op', 'text')
    .addColumn('winning_row', 'text')
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .addColumn('resolved_at', 'bigint')
    .addColumn('resolved_by', 'text')
    .addColumn('resolution', 'text')
    .addPrimaryKeyConstraint('link_conflicts_pk', ['org_id', 'id'])
    .execute()

  await db.schema
    .createTable('link_chunks')
    .addColumn('org_id', 'text', orgRef)
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addColumn('chunk', 'integer', (c) => c.notNull())
    .addColumn('samples', 'integer', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('link_chunks_pk', ['org_id', 'server_id', 'batch_id', 'chunk'])
    .execute()

  await db.schema
    .createTable('link_commands')
    .addColumn('org_id', 'text', orgRef)
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('site_code', 'text', (c) => c.notNull())
    .addColumn('alarm_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('result', 'text')
    .addColumn('settled_at', 'bigint')
    .addPrimaryKeyConstraint('link_commands_pk', ['org_id', 'id'])
    .execute()

  if (pg) {
    for (const table of LINK_TABLES) {
      await enableTenantRowSecurity(db, table)
    }
  }
}

function orgRef(c: ColumnDefinitionBuilder): ColumnDefinitionBuilder {
  return c.notNull().references('orgs.id').onDelete('cascade')
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [...LINK_TABLES].reverse()) {
    await db.schema.dropTable(table).execute()
  }
  if (!isPostgres(db)) await db.schema.dropTable('link_apply_origin').execute()
}
