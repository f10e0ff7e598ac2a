import type { Kysely } from 'kysely'
import { installLinkTriggers } from '../link-triggers.ts'

/**
 * Issue 31: the study parameters of a node (short circuit, load flow), a JSON object validated per node type
 * (modules/electrical/study.ts), on the node and on the staging of the bulk load. The SQLite outbox triggers name
 * every column they copy, so they are made again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('electrical_nodes')
    .addColumn('study', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute()
  await db.schema.alterTable('electrical_network_staging').addColumn('study', 'text').execute()
  await installLinkTriggers(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('electrical_network_staging').dropColumn('study').execute()
  await db.schema.alterTable('electrical_nodes').dropColumn('study').execute()
  await installLinkTriggers(db)
}
