import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import type { Db, LinkCommandsTable } from '../../../db/schema.ts'
import { decodeCursor, toPage } from '../../../http/paging.ts'
import { newId, type OrgId } from '../../../ids.ts'
import type { AlarmCommandQueue, ForwardRequest, LinkedSites } from '../../alarms/forward.ts'
import type { AlarmCommand, AlarmCommandsInput, ListCommandsInput } from './schemas.ts'
import {
  countPendingCommands,
  findLatestCreatedAt,
  insertCommand,
  listCommands,
  listLinkedSiteLists,
  touchPendingCommands,
  type CommandFilter,
} from './store.ts'
import { toCommand } from './view.ts'

export interface CommandsDeps {
  handle: DatabaseHandle
  clock: Clock
  /** The alarms area's read of one alarm: NotFound for an unknown site or alarm (as every read of an unknown id). */
  alarms: { get(orgId: OrgId, siteCode: string, alarmId: string): Promise<unknown> }
}

/** Cloud: a site is linked when a site server that is not revoked lists it, enrolled or not (its alarms are that server's). */
export const linkedSites: LinkedSites = {
  async isLinked(db: Db, orgId: OrgId, siteCode: string): Promise<boolean> {
    for (const list of await listLinkedSiteLists(db, orgId)) {
      const sites: unknown = JSON.parse(list)
      if (Array.isArray(sites) && sites.includes(siteCode)) return true
    }
    return false
  },
}

/**
 * Cloud, seeding a site server (enrolment): the tenant package carries no commands (tenant-transfer/tables.ts), so
 * the seed calls this in a transaction after it took the pull's start cursor: the sites' pending commands are recorded
 * again after that cursor and reach the new site server by the pull. Only then: a command the site server already
 * holds must never come down again as pending (it would be applied twice).
 */
export function republishPendingCommands(trx: Db, orgId: OrgId, siteCodes: readonly string[]): Promise<number> {
  return touchPendingCommands(trx, orgId, siteCodes)
}

export function createCommandsService(deps: CommandsDeps) {
  const { handle, clock, alarms } = deps
  const db = handle.db

  /** Cloud: the queue the alarms area forwards a linked site's actions to (alarms/forward.ts). */
  const queue: AlarmCommandQueue = {
    /** A pending command, in the caller's transaction; it reaches the site server by the pull (the outbox records it). */
    async enqueue(trx: Db, orgId: OrgId, request: ForwardRequest): Promise<AlarmCommand> {
      // Strictly after the site's newest command, so created_at orders them as they were taken even within one ms.
      const latest = await findLatestCreatedAt(trx, orgId, request.siteCode)
      const createdAt = Math.max(clock.now(), latest === null ? 0 : latest + 1)
      const row: LinkCommandsTable = {
        org_id: orgId,
        id: newId('cmd', createdAt),
        site_code: request.siteCode,
        alarm_id: request.alarmId,
        action: request.action,
        body: JSON.stringify(request.body),
        actor: JSON.stringify(request.actor),
        created_at: createdAt,
        status: 'pending',
        result: null,
        settled_at: null,
      }
      await insertCommand(trx, row)
      return toCommand(row)
    },
    countPending: countPendingCommands,
  }

  async function page(orgId: OrgId, filter: Omit<CommandFilter, 'limit' | 'after'>, query: { limit?: number; cursor?: string }) {
    const limit = query.limit ?? 100
    const key = decodeCursor(query.cursor, ['number', 'string'])
    const rows = await listCommands(db, orgId, { ...filter, limit, after: key && { createdAt: key[0] as number, id: key[1] as string } })
    return toPage(rows, limit, toCommand, (r) => [r.created_at, r.id])
  }

  return {
    queue,

    /** The commands of one alarm, oldest first; NotFound for an unknown site or alarm. */
    async listOfAlarm(orgId: OrgId, siteCode: string, alarmId: string, query: AlarmCommandsInput) {
      await alarms.get(orgId, siteCode, alarmId)
      return page(orgId, { siteCode, alarmId }, query)
    },

    /** The organisation's commands, oldest first, by status and site. */
    list: (orgId: OrgId, query: ListCommandsInput) => page(orgId, { status: query.status, siteCode: query.siteId }, query),
  }
}

export type CommandsService = ReturnType<typeof createCommandsService>
