import { sql } from 'kysely'
import type { Db, HistorianRetentionTable } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'

export function findRetention(db: Db, orgId: OrgId, siteCode: string): Promise<HistorianRetentionTable | undefined> {
  return db.selectFrom('historian_retention').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode).executeTakeFirst()
}

/** Sets a site's policy; its progress stays. */
export async function saveRetentionDays(db: Db, orgId: OrgId, siteCode: string, retentionDays: number | null, now: number): Promise<void> {
  await db
    .insertInto('historian_retention')
    .values({ org_id: orgId, site_code: siteCode, retention_days: retentionDays, last_run_at: null, last_deleted: 0, oldest_kept_ts: null, updated_at: now })
    .onConflict((oc) => oc.columns(['org_id', 'site_code']).doUpdateSet({ retention_days: retentionDays, updated_at: now }))
    .execute()
}

/** The sites with a policy (every organisation's: the job runs in the system scope), or of `orgs` only. */
export function listRetainedSites(db: Db, orgs?: readonly string[]): Promise<Array<{ org_id: string; site_code: string; retention_days: number | null }>> {
  let query = db.selectFrom('historian_retention').select(['org_id', 'site_code', 'retention_days']).where('retention_days', 'is not', null)
  if (orgs !== undefined) query = query.where('org_id', 'in', orgs.length === 0 ? [''] : orgs)
  return query.orderBy('org_id').orderBy('site_code').execute()
}

export async function seriesIdsOfSite(db: Db, orgId: OrgId, siteCode: string): Promise<number[]> {
  const rows = await db.selectFrom('historian_series').select('id').where('org_id', '=', orgId).where('site_code', '=', siteCode).orderBy('id').execute()
  return rows.map((r) => Number(r.id))
}

/**
 * Deletes at most `rows` of a series' samples older than `cutoff`, the oldest first, in one statement of its own (a
 * short transaction: no import or read waits long on it). The bound is the timestamp of the `rows`-th oldest such
 * sample, found through the primary key; answers how many went.
 */
export async function deleteOldestSamples(db: Db, orgId: OrgId, seriesId: number, cutoff: number, rows: number): Promise<number> {
  const nth = await sql<{ ts: number }>`select ts from historian_points where org_id = ${orgId} and series_id = ${seriesId} and ts < ${cutoff}
    order by ts limit 1 offset ${rows - 1}`.execute(db)
  const below = nth.rows.length === 0 ? cutoff : Number(nth.rows[0]!.ts) + 1
  const result = await sql`delete from historian_points where org_id = ${orgId} and series_id = ${seriesId} and ts < ${below}`.execute(db)
  return Number(result.numAffectedRows ?? 0n)
}

/** The oldest sample of a series, through the primary key; null when it has none. */
export async function oldestSample(db: Db, orgId: OrgId, seriesId: number): Promise<number | null> {
  const { rows } = await sql<{ ts: number }>`select ts from historian_points where org_id = ${orgId} and series_id = ${seriesId} order by ts limit 1`.execute(
    db,
  )
  return rows.length === 0 ? null : Number(rows[0]!.ts)
}

export async function saveRetentionRun(db: Db, orgId: OrgId, siteCode: string, run: { at: number; deleted: number; oldestKept: number | null }): Promise<void> {
  await db
    .updateTable('historian_retention')
    .set({ last_run_at: run.at, last_deleted: run.deleted, oldest_kept_ts: run.oldestKept })
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .execute()
}
