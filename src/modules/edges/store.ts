import type { Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'
import { reusableQuery } from '../../db/reusable-query.ts'

// Read on every gateway poll (the 304 path): compiled once per database (db/reusable-query.ts).
const versionOf = reusableQuery((db: Db, orgId: string, siteCode: string) =>
  db.selectFrom('edge_config_versions').select('version').where('org_id', '=', orgId).where('site_code', '=', siteCode),
)

/** The site's configuration version (migration 2410's triggers keep it); undefined when its equipment never changed. */
export async function findConfigVersion(db: Db, orgId: OrgId, siteCode: string): Promise<number | undefined> {
  const [row] = await versionOf(db, orgId, siteCode)
  return row === undefined ? undefined : Number(row.version)
}
