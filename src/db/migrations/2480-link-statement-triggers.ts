import type { Kysely } from 'kysely'
import { installLinkTriggers } from '../link-triggers.ts'

/**
 * Issue 29: on PostgreSQL the fleet link's outbox triggers become statement-level, with transition tables (one
 * outbox insert per statement instead of a PL/pgSQL call per row); the row-level `link_<table>_write` / `_delete`
 * triggers and their `link_record()` function go. SQLite's triggers are reinstalled unchanged.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await installLinkTriggers(db)
}

export async function down(): Promise<void> {
  // The statement-level triggers record what the row-level ones did: nothing to undo.
}
