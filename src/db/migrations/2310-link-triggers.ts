import type { Kysely } from 'kysely'
import { dropLinkTriggers, installLinkTriggers } from '../link-triggers.ts'

/** Issue 26: the fleet link's outbox triggers on every linked table (db/link-triggers.ts). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await installLinkTriggers(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await dropLinkTriggers(db)
}
