import type { Db, HistorianTagMarksTable } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'

export type Interpolation = 'step' | 'linear'

/** A page of a site's marks by instance and tag key, after `after` (limit + 1 rows: toPage). */
export function listTagMarks(db: Db, orgId: OrgId, siteCode: string, page: { limit: number; after?: readonly [string, string] }) {
  let query = db.selectFrom('historian_tag_marks').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode)
  const after = page.after
  if (after !== undefined)
    query = query.where((eb) => eb.or([eb('instance_id', '>', after[0]), eb.and([eb('instance_id', '=', after[0]), eb('tag_key', '>', after[1])])]))
  return query
    .orderBy('instance_id')
    .orderBy('tag_key')
    .limit(page.limit + 1)
    .execute()
}

/** The marks of these instances' tags, by `instanceId\0tagKey` (a series read's default interpolation). */
export async function marksOf(db: Db, orgId: OrgId, siteCode: string, instanceIds: readonly string[]): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('historian_tag_marks')
    .select(['instance_id', 'tag_key', 'interpolation'])
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('instance_id', 'in', [...new Set(instanceIds)])
    .execute()
  return new Map(rows.map((r) => [`${r.instance_id}\u0000${r.tag_key}`, r.interpolation]))
}

export async function saveTagMark(db: Db, row: HistorianTagMarksTable): Promise<void> {
  await db
    .insertInto('historian_tag_marks')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['org_id', 'site_code', 'instance_id', 'tag_key']).doUpdateSet({ interpolation: row.interpolation, updated_at: row.updated_at }),
    )
    .execute()
}

/** Answers whether there was a mark to delete. */
export async function deleteTagMark(db: Db, orgId: OrgId, siteCode: string, instanceId: string, tagKey: string): Promise<boolean> {
  const result = await db
    .deleteFrom('historian_tag_marks')
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('instance_id', '=', instanceId)
    .where('tag_key', '=', tagKey)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}
