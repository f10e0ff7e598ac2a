import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import { CLI_ACTOR, type Actor } from '../../identity.ts'
import type { Db } from '../../db/schema.ts'
import { NotFound } from '../../errors/domain-error.ts'
import { newId } from '../../ids.ts'
import { toAuditEvent, type AuditEvent } from '../audit/service.ts'
import {
  deletePlatformAdmin,
  insertPlatformAdmin,
  insertPlatformAudit,
  isPlatformAdminAccount,
  listPlatformAdmins,
  listPlatformAudit,
} from './platform-admins-store.ts'

export interface PlatformAdmin {
  accountId: string
  note: string | null
  addedAt: string
}

/** A platform-level audit record (migration 1500): who changed what and when, outside any organisation. */
export type PlatformAuditRecord = AuditEvent

/** The control plane's operators: a server-side list of OIDC `oid`s, managed by `sitegrid platform-admin`. */
export function createPlatformAdminsService(deps: { handle: DatabaseHandle; clock: Clock }) {
  const { handle, clock } = deps
  const db = handle.db
  const audit = (trx: Db, actor: Actor, action: string, target: string, detail: Record<string, unknown>) => {
    const at = clock.now()
    return insertPlatformAudit(trx, {
      id: newId('pau', at),
      at,
      actor_kind: actor.kind,
      actor_id: actor.subject,
      action,
      target,
      detail: JSON.stringify(detail),
    })
  }
  return {
    async isPlatformAdmin(accountId: string): Promise<boolean> {
      return (await isPlatformAdminAccount(db, accountId)) !== undefined
    },
    /** Adds an `oid`; true when it was not listed yet. A real addition writes a platform audit record. */
    async add(accountId: string, note: string | null, actor: Actor = CLI_ACTOR): Promise<boolean> {
      return db
        .transaction()
        .execute(async (trx) => {
          const added = await insertPlatformAdmin(trx, accountId, note, clock.now())
          if (added) await audit(trx, actor, 'platform_admin.add', accountId, { note })
          await handle.announceInvalidation(trx)
          return added
        })
        .finally(() => handle.invalidateLocally())
    },
    /** Removes an `oid` at once in every process sharing the database; NotFound when it was not listed. */
    async remove(accountId: string, actor: Actor = CLI_ACTOR): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const result = await deletePlatformAdmin(trx, accountId)
        if (Number(result.numDeletedRows) === 0) throw new NotFound()
        await audit(trx, actor, 'platform_admin.remove', accountId, {})
        await handle.announceInvalidation(trx)
      })
      handle.invalidateLocally()
    },
    /** Platform audit records, newest first, `limit` at a time; pass the last record to read the next page. */
    async auditLog(limit: number, after?: PlatformAuditRecord): Promise<PlatformAuditRecord[]> {
      const rows = await listPlatformAudit(db, limit, after && { at: Date.parse(after.at), id: after.id })
      return rows.map(toAuditEvent)
    },
    async list(): Promise<PlatformAdmin[]> {
      return (await listPlatformAdmins(db)).map((r) => ({ accountId: r.account_id, note: r.note, addedAt: new Date(r.added_at).toISOString() }))
    },
  }
}

export type PlatformAdminsService = ReturnType<typeof createPlatformAdminsService>
