import { sql, type OperationNodeSource } from 'kysely'
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
  await db
    .insertInto('audit_events')
    .values({
      org_id: orgId,
      id: row.id,
      at: row.at,
      actor_kind: row.actorKind,
      actor_id: row.actorId,
      action: row.action,
      target: row.target,
      detail: row.detail,
    })
    .execute()
}

/**
 * PostgreSQL: `write` (an INSERT … RETURNING of one row) and its audit row in one statement, the write a
 * data-modifying WITH and the audit row inserted only from the row it returned: atomic without a transaction, one
 * round trip where begin, write, audit and commit took four (issue 29). A write refused by a constraint fails the whole
 * statement, so no audit row exists without its change.
 */
export async function insertWithAuditEvent(db: Db, orgId: OrgId, write: OperationNodeSource, row: AuditRow): Promise<void> {
  await sql`with written as (${write})
    insert into audit_events (org_id, id, at, actor_kind, actor_id, action, target, detail)
    select ${orgId}, ${row.id}, ${row.at}, ${row.actorKind}, ${row.actorId}, ${row.action}, ${row.target}, ${row.detail} from written`.execute(db)
}

/** Newest first; after a keyset cursor (at, id); optionally only actions starting with `actionPrefix` (case-sensitive on both dialects). */
export function listAuditEventsPage(db: Db, orgId: OrgId, options: { limit: number; before?: { at: number; id: string }; actionPrefix?: string }) {
  let query = db.selectFrom('audit_events').selectAll().where('org_id', '=', orgId)
  const { before, actionPrefix } = options
  if (before) {
    query = query.where((eb) => eb.or([eb('at', '<', before.at), eb.and([eb('at', '=', before.at), eb('id', '<', before.id)])]))
  }
  // Not LIKE: SQLite's LIKE ignores ASCII case and both treat % and _ as wildcards.
  if (actionPrefix !== undefined) query = query.where(sql<boolean>`substr(action, 1, ${sql.lit(actionPrefix.length)}) = ${actionPrefix}`)
  return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(options.limit).execute()
}
