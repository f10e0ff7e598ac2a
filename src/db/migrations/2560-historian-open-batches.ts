import { type Kysely, sql } from 'kysely'
import { installLinkTriggers } from '../link-triggers.ts'

/**
 * Issue 30, one batch per gateway and window: a gateway's live pushes of one window go into one historian batch of
 * status `open` (service/live.ts). `historian_batches_open` finds a gateway's open batch in a site (partial: only open
 * rows, a handful per site, so it costs nothing to the imports). The fleet link's triggers leave `open` rows out as
 * they leave `running` ones: the batch goes up once, when it is closed (`complete`), with its samples.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index historian_batches_open on historian_batches (org_id, site_code, created_by) where status = 'open'`.execute(db)
  await installLinkTriggers(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists historian_batches_open`.execute(db)
}
