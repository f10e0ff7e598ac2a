import type { Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

/** Site server: whether a site is one of this server's enrolment's sites (its records are the cloud's). */
export async function isLinkedHere(db: Db, orgId: OrgId, siteCode: string): Promise<boolean> {
  const peer = await db.selectFrom('link_peer').select('sites').where('org_id', '=', orgId).executeTakeFirst()
  return peer !== undefined && (JSON.parse(peer.sites) as unknown[]).includes(siteCode)
}
