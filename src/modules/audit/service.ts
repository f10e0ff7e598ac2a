import type { Actor } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import { sql } from 'kysely'
import type { Dialect } from '../../db/connect.ts'
import type { Database, Db } from '../../db/schema.ts'
import { newId, type OrgId } from '../../ids.ts'
import { decodeCursor, toPage } from '../../http/paging.ts'
import type { AuditEvent } from './schemas.ts'
import { insertAuditEvent, insertRowAndAuditEvent, insertWithAuditEvent, listAuditEventsPage, type AuditRow, type RowInsert } from './store.ts'

export type { AuditEvent } from './schemas.ts'

export interface AuditEntry {
  action: string
  target: string
  detail?: Record<string, unknown>
}

function auditRow(clock: Clock, actor: Actor, entry: AuditEntry): AuditRow {
  const at = clock.now()
  return {
    id: newId('aud', at),
    at,
    actorKind: actor.kind,
    actorId: actor.subject,
    action: entry.action,
    target: entry.target,
    detail: entry.detail ? JSON.stringify(entry.detail) : null,
  }
}

/** Audit rows are written by the caller's transaction, so they exist exactly when the change does. */
export async function recordAudit(trx: Db, clock: Clock, orgId: OrgId, actor: Actor, entry: AuditEntry): Promise<void> {
  await insertAuditEvent(trx, orgId, auditRow(clock, actor, entry))
}

/**
 * A one-row INSERT and its audit row, atomically: on PostgreSQL one statement (audit/store.ts
 * `insertWithAuditEvent`, one round trip instead of four), on SQLite one transaction (no data-modifying WITH there;
 * its statements run in-process), both INSERTs as SQL text compiled once (`compiledRowInsert`). A constraint that
 * refuses the row throws, and no audit row is written.
 */
export async function insertAudited<Table extends keyof Database & string>(
  handle: { db: Db; dialect: Dialect },
  clock: Clock,
  orgId: OrgId,
  actor: Actor,
  entry: AuditEntry,
  insert: RowInsert<Table>,
): Promise<void> {
  const audit = auditRow(clock, actor, entry)
  if (handle.dialect === 'postgres') {
    const write = handle.db
      .insertInto(insert.table)
      .values(insert.row as never)
      .returning(sql<number>`1`.as('written'))
    await insertWithAuditEvent(handle.db, orgId, write, audit)
    return
  }
  await insertRowAndAuditEvent(handle.db, orgId, insert, audit)
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
