import type { Db, LinkCommandsTable } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'

export type CommandStatus = 'pending' | 'applied' | 'refused'

/** The `sites` JSON arrays of the organisation's site servers that are not revoked (enrolled or not). */
export async function listLinkedSiteLists(db: Db, orgId: OrgId): Promise<string[]> {
  const rows = await db.selectFrom('site_servers').select('sites').where('org_id', '=', orgId).where('revoked_at', 'is', null).execute()
  return rows.map((r) => r.sites)
}

export async function insertCommand(db: Db, row: LinkCommandsTable): Promise<void> {
  await db.insertInto('link_commands').values(row).execute()
}

/** The newest `created_at` of a site's commands, so the next one sorts after it even when the clock stands still. */
export async function findLatestCreatedAt(db: Db, orgId: OrgId, siteCode: string): Promise<number | null> {
  const row = await db
    .selectFrom('link_commands')
    .select((eb) => eb.fn.max('created_at').as('latest'))
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .executeTakeFirst()
  return row?.latest == null ? null : Number(row.latest)
}

export async function countPendingCommands(db: Db, orgId: OrgId, siteCode: string, alarmId: string): Promise<number> {
  const row = await db
    .selectFrom('link_commands')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('alarm_id', '=', alarmId)
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export interface CommandFilter {
  limit: number
  /** Keyset: the (created_at, id) of the last row of the previous page; rows come oldest first. */
  after?: { createdAt: number; id: string }
  status?: CommandStatus
  siteCode?: string
  alarmId?: string
}

/** Commands oldest first, (created_at, id): the order the site server applies them in. `limit + 1` rows for paging. */
export async function listCommands(db: Db, orgId: OrgId, filter: CommandFilter): Promise<LinkCommandsTable[]> {
  let query = db.selectFrom('link_commands').selectAll().where('org_id', '=', orgId)
  if (filter.status !== undefined) query = query.where('status', '=', filter.status)
  if (filter.siteCode !== undefined) query = query.where('site_code', '=', filter.siteCode)
  if (filter.alarmId !== undefined) query = query.where('alarm_id', '=', filter.alarmId)
  const after = filter.after
  if (after !== undefined) {
    query = query.where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]))
  }
  return query
    .orderBy('created_at')
    .orderBy('id')
    .limit(filter.limit + 1)
    .execute()
}

/**
 * Settles a pending command; false when it was not pending any more (another run settled it first), so a command is
 * settled once.
 */
export async function settleCommand(
  db: Db,
  orgId: OrgId,
  id: string,
  status: Exclude<CommandStatus, 'pending'>,
  result: string,
  settledAt: number,
): Promise<boolean> {
  const res = await db
    .updateTable('link_commands')
    .set({ status, result, settled_at: settledAt })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst()
  return Number(res.numUpdatedRows) === 1
}

/**
 * Records the pending commands of these sites again in the outbox (an update to the same values fires the trigger),
 * so a site server seeded after they were created receives them by the pull. Returns how many.
 */
export async function touchPendingCommands(db: Db, orgId: OrgId, siteCodes: readonly string[]): Promise<number> {
  if (siteCodes.length === 0) return 0
  const res = await db
    .updateTable('link_commands')
    .set((eb) => ({ status: eb.ref('status') }))
    .where('org_id', '=', orgId)
    .where('site_code', 'in', [...siteCodes])
    .where('status', '=', 'pending')
    .executeTakeFirst()
  return Number(res.numUpdatedRows)
}
