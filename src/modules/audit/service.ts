import type { Actor } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import type { Db } from '../../db/schema.ts'
import { newId, type OrgId } from '../../ids.ts'
import { decodeCursor, toPage } from '../../http/paging.ts'
import type { AuditEvent } from './schemas.ts'
import { insertAuditEvent, listAuditEventsPage } from './store.ts'

export type { AuditEvent } from './schemas.ts'

export interface AuditEntry {
  action: string
  target: string
  detail?: Record<string, unknown>
}

/** Audit rows are written by the caller's transaction, so they exist exactly when the change does. */
export async function recordAudit(trx: Db, clock: Clock, orgId: OrgId, actor: Actor, entry: AuditEntry): Promise<void> {
  const at = clock.now()
  await insertAuditEvent(trx, orgId, {
    id: newId('aud', at),
    at,
    actorKind: actor.kind,
    actorId: actor.subject,
    action: entry.action,
    target: entry.target,
    detail: entry.detail ? JSON.stringify(entry.detail) : null,
  })
}

/** An audit row as the API shows it (the organisation's trail and the platform's). */
export function toAuditEvent(r: {
  id: string
  at: number
  actor_kind: string
  actor_id: string
  action: string
  target: string
  detail: string | null
}): AuditEvent {
  return {
    id: r.id,
    at: new Date(r.at).toISOString(),
    actorKind: r.actor_kind,
    actorId: r.actor_id,
    action: r.action,
    target: r.target,
    detail: r.detail === null ? null : (JSON.parse(r.detail) as Record<string, unknown>),
  }
}

/** One page of the organisation's audit trail, newest first; a bad cursor is a 400 naming `cursor`. */
export async function readAuditPage(db: Db, orgId: OrgId, page: { limit: number; cursor?: string; actionPrefix?: string }) {
  const key = decodeCursor(page.cursor, ['number', 'string'])
  const before = key && { at: key[0] as number, id: key[1] as string }
  const rows = await listAuditEventsPage(db, orgId, { limit: page.limit + 1, before, actionPrefix: page.actionPrefix })
  return toPage(rows, page.limit, toAuditEvent, (r) => [r.at, r.id])
}
