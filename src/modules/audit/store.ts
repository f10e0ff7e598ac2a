import type { Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export interface AuditRow {
  id: string
  at: number
  actorKind: string
  actorId: string
  action: string
  target: string
  detail: string | null
}

export async function insertAuditEvent(db: Db, orgId: OrgId, row: AuditRow): Promise<void> {
  await db.insertInto('audit_events').values({
    org_id: orgId, id: row.id, at: row.at, actor_kind: row.actorKind, actor_id: row.actorId,
    action: row.action, target: row.target, detail: row.detail,
  }).execute()
}

export function listAuditEvents(db: Db, orgId: OrgId, limit: number) {
  return db.selectFrom('audit_events').selectAll()
    .where('org_id', '=', orgId)
    .orderBy('at', 'desc').orderBy('id', 'desc')
    .limit(limit)
    .execute()
}
