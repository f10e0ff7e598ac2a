import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import { createTurns } from '../../db/turns.ts'
import { invalidField, NotFound } from '../../errors/domain-error.ts'
import type { OrgId } from '../../ids.ts'
import { AlarmEventsFromSiteServer } from '../alarms/errors.ts'
import type { AlarmsService } from '../alarms/service.ts'
import type { AlarmEventInput } from '../alarms/schemas.ts'
import type { Controller } from '../controllers/schemas.ts'
import type { ControllersService } from '../controllers/service.ts'
import { EdgeStatusQueueFull } from './errors.ts'
import type { EdgeHeartbeat, EdgeStatus, HeartbeatResult } from './schemas.ts'
import {
  deleteControllerStatus,
  deleteControllerStatusIfUnchanged,
  findAlarmed,
  findControllerStatus,
  findGateways,
  findOrgsToSweep,
  findUnalarmedUntil,
  markAlarmedIfUnchanged,
  upsertControllerStatus,
  upsertGateway,
  type ControllerStatusRow,
  type GatewayRow,
} from './store.ts'
import { appendTo } from '../../grouping.ts'

const PAGE = 500
/** The alarm raised for a controller that stopped communicating: its source is the controller (`instanceId` its id). */
export const COMM_LOSS = 'COMM_LOSS'
const RAISER = 'edge-monitor'
/** The default of SITEGRID_EDGE_STATUS_QUEUE_MAX. */
export const MAX_WAITING_EDGE_TURNS = 1000

export interface EdgeStatusDeps {
  handle: DatabaseHandle
  clock: Clock
  controllers: Pick<ControllersService, 'list' | 'get'>
  alarms: Pick<AlarmsService, 'raiseSystemEvents'>
  staleAfterMs: number
  /** Heartbeats and sweeps of all sites waiting for their site's turn (or running) in the process at once (SITEGRID_EDGE_STATUS_QUEUE_MAX); one more is a 503. */
  maxWaitingTurns?: number
  /** The site's equipment version (service.ts): moves with every change to its controllers, by any writer. */
  configVersion(orgId: OrgId, siteCode: string): Promise<number>
}

type Transition = { row: Pick<ControllerStatusRow, 'controller_id' | 'edge_id' | 'last_error'>; isActive: boolean; at: number; why: string }

/** The site's controllers assigned to `edgeId` (to any gateway when absent), by id, every page. */
export async function listAssigned(controllers: Pick<ControllersService, 'list'>, orgId: OrgId, siteCode: string, edgeId?: string): Promise<Controller[]> {
  const out: Controller[] = []
  let cursor: string | undefined
  do {
    const page = await controllers.list(orgId, siteCode, {
      limit: PAGE,
      ...(edgeId === undefined ? {} : { edgeId }),
      ...(cursor === undefined ? {} : { cursor }),
    })
    out.push(...page.items)
    cursor = page.nextCursor ?? undefined
  } while (cursor !== undefined)
  return out
}

/**
 * Gateway heartbeats and the states derived from them (ARCHITECTURE.md § Edge gateway status). A controller is
 * `stale` when its gateway has not reported it within `staleAfterMs`, `faulted` when reported `failed`, else `online`;
 * a gateway is `stale` without a heartbeat within `staleAfterMs`, `faulted` when it reports a fault or any controller
 * it polls is faulted, else `online`. A controller that was reporting and then fails or goes stale gets a `COMM_LOSS`
 * alarm event through the alarms service, and a `normal` one when it reports `ok` again.
 */
export function createEdgeStatus(deps: EdgeStatusDeps) {
  const { clock, controllers, alarms, staleAfterMs, configVersion } = deps
  const db = deps.handle.db
  /** Site → the equipment version at which each of its alarmed reports named a controller still on that gateway. */
  const verified = new Map<string, number>()
  // A site's heartbeats and sweeps take turns in this process: each reads the alarm flags, raises, then writes them.
  // Bounded: a gateway flooding heartbeats while its site's turn is held (a slow alarm write) is refused, not queued.
  const maxWaiting = deps.maxWaitingTurns ?? MAX_WAITING_EDGE_TURNS
  const inSiteTurn = createTurns(maxWaiting, () => new EdgeStatusQueueFull(maxWaiting))
  const inTurn = <T>(orgId: OrgId, siteCode: string, work: () => Promise<T>): Promise<T> => inSiteTurn(`${orgId} ${siteCode}`, work)

  const assigned = (orgId: OrgId, siteCode: string, edgeId?: string) => listAssigned(controllers, orgId, siteCode, edgeId)

  /** Sends the transitions as alarm events; the event id is the controller, the time and the direction, so a resend is a duplicate. */
  async function raise(orgId: OrgId, siteCode: string, transitions: Transition[]): Promise<void> {
    if (transitions.length === 0) return
    const events: AlarmEventInput[] = transitions.map((t) => ({
      eventId: `${COMM_LOSS}:${t.row.controller_id}:${t.at}:${t.isActive ? 'active' : 'normal'}`,
      instanceId: t.row.controller_id,
      condition: COMM_LOSS,
      priority: 'high',
      state: t.isActive ? 'active' : 'normal',
      occurredAt: new Date(t.at).toISOString(),
      message: t.why.slice(0, 500),
    }))
    try {
      await alarms.raiseSystemEvents(orgId, RAISER, siteCode, events)
    } catch (err) {
      // Cloud, a linked site: its site server keeps its alarms (and hears its gateways); the cloud raises none.
      if (!(err instanceof AlarmEventsFromSiteServer)) throw err
    }
  }

  const isStale = (at: number | undefined, now: number) => at === undefined || at <= now - staleAfterMs
  const iso = (ms: number | null | undefined) => (ms == null ? null : new Date(ms).toISOString())

  function view(siteCode: string, edgeId: string, gateway: GatewayRow | undefined, list: Controller[], rows: Map<string, ControllerStatusRow>): EdgeStatus {
    const now = clock.now()
    const items = list.map((c) => {
      const row = rows.get(c.id)
      const mine = row?.edge_id === edgeId ? row : undefined
      const state = isStale(mine?.reported_at, now) ? 'stale' : mine!.communication === 'failed' ? 'faulted' : 'online'
      return {
        controllerId: c.id,
        name: c.name,
        state,
        communication: (mine?.communication ?? null) as 'ok' | 'failed' | null,
        lastGoodPollAt: iso(mine?.last_good_poll_at),
        errorCount: mine === undefined ? null : Number(mine.error_count),
        lastError: mine?.last_error ?? null,
        reportedAt: iso(mine?.reported_at),
      } as const
    })
    const heartbeatAt = gateway === undefined ? undefined : Number(gateway.heartbeat_at)
    const state = isStale(heartbeatAt, now) ? 'stale' : gateway!.is_faulted === 1 || items.some((i) => i.state === 'faulted') ? 'faulted' : 'online'
    return {
      siteId: siteCode,
      edgeId,
      state,
      lastHeartbeatAt: iso(heartbeatAt),
      gatewayVersion: gateway?.gateway_version ?? null,
      faulted: gateway?.is_faulted === 1,
      message: gateway?.message ?? null,
      staleAfterMs,
      controllers: items,
    }
  }

  /**
   * The alarmed reports whose controller was deleted or no longer is on the gateway that reported it: their alarm
   * returns to normal (the alarms service's rules: unacknowledged, it waits for an acknowledgement; acknowledged, it
   * closes) and the report goes. Skipped while the site's equipment version is the one the last look found none at:
   * a delete or a move moves it, so the periodic sweep costs one primary-key read a site with a standing alarm.
   */
  async function clearGone(orgId: OrgId, siteCode: string, alarmed: ControllerStatusRow[]): Promise<number> {
    const key = `${orgId} ${siteCode}`
    if (alarmed.length === 0) {
      verified.delete(key)
      return 0
    }
    // Read before the controllers: a change committed in between moves the version past the one recorded.
    const version = await configVersion(orgId, siteCode)
    if (verified.get(key) === version) return 0
    const edgeOf = new Map((await assigned(orgId, siteCode)).map((c) => [c.id, c.edgeId]))
    const gone = alarmed.filter((row) => edgeOf.get(row.controller_id) !== row.edge_id)
    const now = clock.now()
    const why = (row: ControllerStatusRow) =>
      edgeOf.has(row.controller_id) ? `The controller is no longer polled by gateway ${row.edge_id}.` : 'The controller was deleted.'
    // Raised before the reports go: a failed raise leaves them alarmed, so the next sweep raises again.
    await raise(
      orgId,
      siteCode,
      gone.map((row) => ({ row, isActive: false, at: now, why: why(row) })),
    )
    for (const row of gone) await deleteControllerStatusIfUnchanged(db, orgId, row)
    verified.set(key, version)
    return gone.length
  }

  /**
   * Raises `COMM_LOSS` for each controller of the site reported once and not since `staleAfterMs`, at the moment it went
   * stale. A report of a controller deleted, or no longer assigned to the gateway that made it, is dropped instead; an
   * alarmed one is cleared first (clearGone).
   */
  async function sweepSite(orgId: OrgId, siteCode: string, rows: ControllerStatusRow[], alarmed: ControllerStatusRow[]): Promise<number> {
    return inTurn(orgId, siteCode, async () => {
      const cleared = await clearGone(orgId, siteCode, alarmed)
      const transitions: Transition[] = []
      for (const row of rows) {
        const current = await controllers.get(orgId, siteCode, row.controller_id).catch((err: unknown) => {
          if (err instanceof NotFound) return undefined
          throw err
        })
        if (current?.edgeId !== row.edge_id) {
          await deleteControllerStatus(db, orgId, siteCode, row.controller_id)
          continue
        }
        const at = Number(row.reported_at) + staleAfterMs
        // Marked first: a heartbeat of another process that lands meanwhile leaves the row changed and nothing is raised.
        if (await markAlarmedIfUnchanged(db, orgId, row))
          transitions.push({ row, isActive: true, at, why: `No report from gateway ${row.edge_id} since ${new Date(Number(row.reported_at)).toISOString()}.` })
      }
      await raise(orgId, siteCode, transitions)
      return cleared + transitions.length
    })
  }

  /**
   * The stale sweep of one organisation's sites (reads run it for their site; the periodic job for every
   * organisation); answers the alarm events it sent (raised and cleared).
   */
  async function sweepOrg(orgId: OrgId, siteCode?: string): Promise<number> {
    const stale = groupBy(await findUnalarmedUntil(db, orgId, clock.now() - staleAfterMs, siteCode), (r) => r.site_code)
    const alarmed = groupBy(await findAlarmed(db, orgId, siteCode), (r) => r.site_code)
    let sent = 0
    for (const site of new Set([...stale.keys(), ...alarmed.keys()])) sent += await sweepSite(orgId, site, stale.get(site) ?? [], alarmed.get(site) ?? [])
    return sent
  }

  return {
    /**
     * Stores a heartbeat: the gateway's row and each accepted controller's report (reports of controllers not assigned to
     * this gateway are refused one by one). Raises or clears the controllers' `COMM_LOSS` alarms on a change. NotFound for
     * a gateway with no controller assigned; ValidationFailed for a controller reported twice.
     */
    async report(orgId: OrgId, siteCode: string, edgeId: string, body: EdgeHeartbeat): Promise<HeartbeatResult> {
      const seen = new Set<string>()
      body.controllers.forEach((c, i) => {
        if (seen.has(c.controllerId)) throw invalidField(`/controllers/${i}/controllerId`, 'reports a controller already reported in this heartbeat')
        seen.add(c.controllerId)
      })
      const list = await assigned(orgId, siteCode, edgeId)
      if (list.length === 0) throw new NotFound()
      const ids = new Set(list.map((c) => c.id))
      const results: HeartbeatResult['results'] = body.controllers.map((c) =>
        ids.has(c.controllerId)
          ? { controllerId: c.controllerId, status: 'accepted' }
          : {
              controllerId: c.controllerId,
              status: 'refused',
              code: 'ControllerNotOnEdge',
              detail: `controller ${c.controllerId} is not assigned to ${edgeId}`,
            },
      )
      const reports = body.controllers.filter((c) => ids.has(c.controllerId))
      await inTurn(orgId, siteCode, async () => {
        const now = clock.now()
        const before = new Map(
          (
            await findControllerStatus(
              db,
              orgId,
              siteCode,
              reports.map((r) => r.controllerId),
            )
          ).map((r) => [r.controller_id, r]),
        )
        const rows = reports.map((r) => ({
          org_id: orgId,
          site_code: siteCode,
          controller_id: r.controllerId,
          edge_id: edgeId,
          communication: r.communication,
          last_good_poll_at: r.lastGoodPollAt === null ? null : Date.parse(r.lastGoodPollAt),
          error_count: r.errorCount,
          last_error: r.lastError ?? null,
          reported_at: now,
          is_alarmed: r.communication === 'failed' ? 1 : 0,
        }))
        const transitions = rows
          .filter((row) => row.is_alarmed !== (before.get(row.controller_id)?.is_alarmed ?? 0))
          .map((row) => ({
            row,
            isActive: row.is_alarmed === 1,
            at: now,
            why:
              row.is_alarmed === 1
                ? `Gateway ${edgeId} cannot poll the controller${row.last_error ? `: ${row.last_error}` : '.'}`
                : `Gateway ${edgeId} polls it again.`,
          }))
        // Raised before the flags are stored: a failed raise leaves them as they were, so the next heartbeat raises again.
        await raise(orgId, siteCode, transitions)
        await db.transaction().execute(async (trx) => {
          await upsertGateway(trx, {
            org_id: orgId,
            site_code: siteCode,
            edge_id: edgeId,
            gateway_version: body.gatewayVersion,
            is_faulted: body.faulted === true ? 1 : 0,
            message: body.message ?? null,
            heartbeat_at: now,
          })
          await upsertControllerStatus(trx, rows)
        })
      })
      const accepted = results.filter((r) => r.status === 'accepted').length
      return { accepted, refused: results.length - accepted, results, status: await read(orgId, siteCode, edgeId, list) }
    },

    /** One gateway's state and its controllers'; NotFound for a gateway with no controller assigned. */
    async status(orgId: OrgId, siteCode: string, edgeId: string): Promise<EdgeStatus> {
      await sweepOrg(orgId, siteCode)
      const list = await assigned(orgId, siteCode, edgeId)
      if (list.length === 0) throw new NotFound()
      return read(orgId, siteCode, edgeId, list)
    },

    /** Every gateway of the site with a controller assigned, by edge id. */
    async list(orgId: OrgId, siteCode: string): Promise<EdgeStatus[]> {
      await sweepOrg(orgId, siteCode)
      const all = (await assigned(orgId, siteCode)).filter((c) => c.edgeId !== null)
      const gateways = new Map((await findGateways(db, orgId, siteCode)).map((g) => [g.edge_id, g]))
      const rows = new Map((await findControllerStatus(db, orgId, siteCode)).map((r) => [r.controller_id, r]))
      const byEdge = groupBy(all, (c) => c.edgeId!)
      return [...byEdge.keys()].sort().map((edgeId) => view(siteCode, edgeId, gateways.get(edgeId), byEdge.get(edgeId)!, rows))
    },

    /** The periodic job: every organisation with a report gone stale and not alarmed yet, or with an alarmed one; `raised` counts the events sent. */
    async sweep(options: { orgs?: readonly OrgId[] } = {}): Promise<{ orgs: number; raised: number }> {
      const found = await findOrgsToSweep(db, clock.now() - staleAfterMs)
      // Only these organisations (tests share a database); every one by default.
      const orgs = options.orgs === undefined ? found : found.filter((o) => options.orgs!.includes(o))
      let raised = 0
      for (const orgId of orgs) raised += await sweepOrg(orgId)
      return { orgs: orgs.length, raised }
    },
  }

  async function read(orgId: OrgId, siteCode: string, edgeId: string, list: Controller[]): Promise<EdgeStatus> {
    const [gateway] = await findGateways(db, orgId, siteCode, edgeId)
    const rows = new Map(
      (
        await findControllerStatus(
          db,
          orgId,
          siteCode,
          list.map((c) => c.id),
        )
      ).map((r) => [r.controller_id, r]),
    )
    return view(siteCode, edgeId, gateway, list, rows)
  }
}

export type EdgeStatusService = ReturnType<typeof createEdgeStatus>

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>()
  for (const item of items) appendTo(out, key(item), item)
  return out
}
