import type { Db } from '../../../db/schema.ts'
import { decodeCursor, toPage } from '../../../http/paging.ts'
import { LAST_ISO_MS } from '../../../http/input-guard.ts'
import type { Actor } from '../../../identity.ts'
import type { OrgId } from '../../../ids.ts'
import { recordAudit } from '../../audit/service.ts'
import { LinkConflictNotFound, LinkConflictNotReapplicable, LinkConflictResolved } from '../errors.ts'
import { isClash, type SyncDeps } from './apply-push.ts'
import type { Conflict, ConflictList, ListConflictsOptions } from './schemas.ts'
import { deleteRow, findConflict, listConflicts, resolveConflict, upsertRows, type ConflictRow, type Row } from './store.ts'
import { shapeOf } from './validate.ts'

/**
 * The versions that lost under the conflict rule (link_conflicts): listed newest first, read, re-applied (cloud: the
 * losing version becomes a cloud change, so it reaches the site by the pull like any other) or dismissed. Resolving
 * is itself a change of a linked table, so the site sees who resolved it and when.
 */
export function toConflict(r: ConflictRow): Conflict {
  const iso = (ms: number) => new Date(ms).toISOString()
  return {
    id: r.id,
    serverId: r.server_id,
    table: r.table_name,
    site: r.site_code,
    key: JSON.parse(r.row_key) as Conflict['key'],
    losingOp: r.losing_op as Conflict['losingOp'],
    losingRow: JSON.parse(r.losing_row) as Conflict['losingRow'],
    // The sender's clock as sent; one stored before the wire bounded it (session 25) reads as the last date it may be.
    losingAt: iso(Math.min(r.losing_at, LAST_ISO_MS)),
    winningOp: r.winning_op as Conflict['winningOp'],
    winningRow: r.winning_row === null ? null : (JSON.parse(r.winning_row) as NonNullable<Conflict['winningRow']>),
    recordedAt: iso(r.recorded_at),
    resolvedAt: r.resolved_at === null ? null : iso(r.resolved_at),
    resolvedBy: r.resolved_by,
    resolution: r.resolution as Conflict['resolution'],
  }
}

export function createConflictsService(deps: SyncDeps) {
  const { db, dialect } = deps.handle

  async function settle(
    orgId: string,
    id: string,
    actor: Actor,
    apply: ((trx: Db, row: ConflictRow) => Promise<void>) | undefined,
    resolution: string,
  ): Promise<Conflict> {
    return db.transaction().execute(async (trx) => {
      const row = await findConflict(trx, orgId, id, dialect === 'postgres')
      if (!row) throw new LinkConflictNotFound(id)
      if (row.resolution !== null) throw new LinkConflictResolved(id, row.resolution)
      if (apply) await apply(trx, row)
      const at = deps.clock.now()
      const by = `${actor.kind}:${actor.subject}`
      await resolveConflict(trx, orgId, id, { at, by, resolution })
      await recordAudit(trx, deps.clock, orgId as OrgId, actor, {
        action: `link_conflict.${resolution}`,
        target: id,
        detail: { table: row.table_name, site: row.site_code, key: JSON.parse(row.row_key) as unknown },
      })
      return toConflict({ ...row, resolved_at: at, resolved_by: by, resolution })
    })
  }

  return {
    /** Newest recorded first, a page at a time; a cursor this list did not make is a 400 naming `cursor`. */
    async list(orgId: string, o: ListConflictsOptions): Promise<ConflictList> {
      const limit = o.limit ?? 50
      const key = decodeCursor(o.cursor, ['number', 'string'])
      const before = key && { recordedAt: key[0] as number, id: key[1] as string }
      const rows = await listConflicts(db, orgId, { limit: limit + 1, unresolved: o.unresolved ?? false, ...(before ? { before } : {}) })
      return toPage(rows, limit, toConflict, (r) => [r.recorded_at, r.id])
    },

    async get(orgId: string, id: string): Promise<Conflict> {
      const row = await findConflict(db, orgId, id, false)
      if (!row) throw new LinkConflictNotFound(id)
      return toConflict(row)
    },

    /**
     * Cloud: applies the losing version as the cloud's own change (a normal local change: the outbox sends it to the
     * site) and marks the conflict re-applied by `by`. A losing version that breaks a rule of its table now is refused.
     */
    reapply(orgId: string, id: string, actor: Actor): Promise<Conflict> {
      return settle(
        orgId,
        id,
        actor,
        async (trx, row) => {
          const shape = await shapeOf(db, dialect, row.table_name, trx)
          if (!shape) throw new LinkConflictNotReapplicable(id, `this server has no table ${row.table_name}`)
          const key = shape.primaryKey.filter((c) => c !== 'org_id')
          const losing = JSON.parse(row.losing_row) as Row
          const missing = shape.columns.find((c) => !Object.hasOwn(losing, c))
          if (missing) throw new LinkConflictNotReapplicable(id, `the table has a column ${missing} the losing version lacks`)
          try {
            if (row.losing_op === 'delete') await deleteRow(trx, shape, orgId, key, JSON.parse(row.row_key) as unknown[])
            else await upsertRows(trx, shape, orgId, [losing])
          } catch (error) {
            if (isClash(error)) throw new LinkConflictNotReapplicable(id, 'a unique value is held by another row, or a row it refers to is gone')
            throw error
          }
        },
        'reapplied',
      )
    },

    /** Keeps the cloud's version: the conflict is closed as dismissed by `actor`. */
    dismiss(orgId: string, id: string, actor: Actor): Promise<Conflict> {
      return settle(orgId, id, actor, undefined, 'dismissed')
    },
  }
}

export type ConflictsService = ReturnType<typeof createConflictsService>
