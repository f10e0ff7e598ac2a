import type { Kysely } from 'kysely'

/**
 * Issue 26, the fleet link's push on a PostgreSQL site server (ARCHITECTURE.md § Fleet link): the site keeps the
 * cloud's acknowledged mark of its outbox as a cursor (`acked_tx`, `acked_seq`), as the pull keeps its own, because
 * its push pages by (tx, seq). 0 on SQLite, where tx is always 0, and for every enrolment made before this migration
 * (a site server on SQLite, the only kind that linked fully then: its mark was (0, acked_seq) already).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('link_peer')
    .addColumn('acked_tx', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('link_peer').dropColumn('acked_tx').execute()
}
