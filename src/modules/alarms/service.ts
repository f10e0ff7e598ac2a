import type { Actor } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'
import { createTurns } from '../../db/turns.ts'
import { invalidField, NotFound, type FieldProblem } from '../../errors/domain-error.ts'
import { decodeCursor, toPage } from '../../http/paging.ts'
import { DATE_TIME_RULE } from '../../http/problem.ts'
import type { OrgId } from '../../ids.ts'
import { recordAudit } from '../audit/service.ts'
import type { SiteDependent } from '../sites/service.ts'
import { AlarmEventsFromSiteServer, AlarmStateConflict, AlarmWriteQueueFull } from './errors.ts'
import { checkForwardedAction, ForwardedToSite, OPERATOR_ACTIONS, type AlarmLink, type CheckedAction, type SettleApplied } from './forward.ts'
import { applyEventBatch, type CheckedEvent, type EventActor } from './ingest.ts'
import type { OperatorAction } from './lifecycle.ts'
import { CHATTER_WINDOW_MS, computeAlarmLoad, INTERVAL_MS } from './load.ts'
import { applyAction, expireShelvesIn } from './operate.ts'
import { retryOnRace } from './retry.ts'
import {
  MAX_FUTURE_SKEW_MS,
  MAX_LISTED_HISTORY,
  MAX_LOAD_PERIOD_MS,
  MAX_SHELVE_MS,
  type AlarmActionName,
  type AlarmCommand,
  type AlarmEventInput,
  type AlarmLoad,
  type AlarmLoadQueryInput,
  type EventResult,
  type ListAlarmsInput,
} from './schemas.ts'
import { countAlarmsOfSite, findAlarm, lockSiteAlarms, findExpiredShelves, countActivations, listAlarmHistory, listAlarmsBySite } from './store.ts'
import { toAlarm, toTransition } from './view.ts'

/** The instances area answers which instance ids exist in a site (through its service, never its table). */
export interface InstanceLookup {
  existingIds(orgId: OrgId, siteCode: string, ids: string[]): Promise<Set<string>>
}

export interface AlarmsDeps {
  handle: DatabaseHandle
  clock: Clock
  sites: { require(orgId: OrgId, code: string): Promise<unknown> }
  instances: InstanceLookup
  /** Hears a transaction retried after a concurrent writer won (info: how often a site's writers collide). */
  log?: { info(details: object, message: string): void }
  /** Most alarm writes waiting (or running) in this process at a time (SITEGRID_ALARM_WRITE_QUEUE_MAX); one more is a 503. */
  maxWaitingWrites?: number
  /** How long a write that keeps losing its race is tried again (retry.ts RETRY_DEADLINE_MS unless given), then a 503. */
  writeRetryDeadlineMs?: number
  /** Cloud: the fleet link. A linked site's alarms are its site server's: actions are forwarded, events refused (forward.ts). */
  link?: AlarmLink
}

function instantOf(text: string, pointer: string, where: FieldProblem['in'] = 'body'): number {
  const ms = Date.parse(text)
  if (!Number.isFinite(ms)) throw invalidField(pointer, DATE_TIME_RULE, where)
  return ms
}

/** The default of SITEGRID_ALARM_WRITE_QUEUE_MAX. */
export const MAX_WAITING_ALARM_WRITES = 1000

/** For the site deletion preview: the alarms a site delete would remove. */
export const alarmsSiteDependent: SiteDependent = { name: 'alarms', count: countAlarmsOfSite }

export function createAlarmsService(deps: AlarmsDeps) {
  const { handle, clock, sites, instances, log, link } = deps
  const db = handle.db

  const maxWaiting = deps.maxWaitingWrites ?? MAX_WAITING_ALARM_WRITES
  const inTurn = createTurns(maxWaiting, () => new AlarmWriteQueueFull(maxWaiting))

  /**
   * One transaction of a site's alarm writers: under the site's alarm lock, retried until it applies (retry.ts). The
   * writers of one site in this process take turns before they ask for a connection, so a burst of batches for one
   * site waits here rather than holding the pool's connections while it waits for the lock (other requests need them).
   */
  function writeAlarms<T>(orgId: OrgId, siteCode: string, work: (trx: Db) => Promise<T>): Promise<T> {
    return inTurn(`${orgId} ${siteCode}`, () =>
      retryOnRace(
        () =>
          db.transaction().execute(async (trx) => {
            await lockSiteAlarms(trx, handle.dialect, orgId, siteCode)
            return work(trx)
          }),
        {
          deadlineMs: deps.writeRetryDeadlineMs,
          onRetry: (retry) => log?.info({ siteId: siteCode, retry }, 'alarm write retried after a concurrent change'),
        },
      ),
    )
  }

  /** Cloud: whether a site server keeps this site's alarms (then the cloud holds its copy and changes none of it). */
  async function isLinked(orgId: OrgId, siteCode: string): Promise<boolean> {
    return link !== undefined && (await link.sites.isLinked(db, orgId, siteCode))
  }

  async function expireShelves(orgId: OrgId, siteCode: string): Promise<void> {
    // A linked site's server expires its shelves and sends the transitions up; the cloud's copy must not add its own.
    if (await isLinked(orgId, siteCode)) return
    const expired = await findExpiredShelves(db, orgId, siteCode, clock.now())
    if (expired.length > 0) await writeAlarms(orgId, siteCode, (trx) => expireShelvesIn(trx, orgId, expired))
  }

  /** `settle` (a forwarded action, on a site server) runs in the action's transaction with the alarm's new state. */
  async function act(
    orgId: OrgId,
    actor: Actor,
    siteCode: string,
    alarmId: string,
    action: OperatorAction,
    comment: string | null,
    shelvedUntil?: number,
    settle?: SettleApplied,
  ) {
    await sites.require(orgId, siteCode)
    await expireShelves(orgId, siteCode)
    await writeAlarms(orgId, siteCode, async (trx) => {
      const row = await findAlarm(trx, orgId, siteCode, alarmId)
      if (!row) throw new NotFound()
      await applyAction(trx, orgId, actor, row, { action, at: clock.now(), comment, shelvedUntil })
      if (action !== 'acknowledge') {
        await recordAudit(trx, clock, orgId, actor, {
          action: `alarm.${action}`,
          target: alarmId,
          detail: { siteId: siteCode, comment, shelvedUntil: shelvedUntil ?? null },
        })
      }
      if (settle) await settle(trx, toAlarm((await findAlarm(trx, orgId, siteCode, alarmId))!))
    })
    return read(orgId, siteCode, alarmId)
  }

  /**
   * Cloud, a linked site: the request was checked as if it applied here (the site and the alarm exist, the body is
   * valid), then it is stored as a pending command for the site server, which applies it under the normal rules.
   * Otherwise (a site server, or an unlinked site) `apply` runs.
   */
  async function forwardOr<T>(
    orgId: OrgId,
    actor: Actor,
    siteCode: string,
    alarmId: string,
    action: AlarmActionName,
    body: Record<string, unknown>,
    apply: () => Promise<T>,
  ): Promise<T | ForwardedToSite<AlarmCommand>> {
    if (link === undefined) return apply()
    await sites.require(orgId, siteCode)
    if (!(await link.sites.isLinked(db, orgId, siteCode))) return apply()
    if (!(await findAlarm(db, orgId, siteCode, alarmId))) throw new NotFound()
    return new ForwardedToSite(await link.commands.enqueue(db, orgId, { siteCode, alarmId, action, body, actor }))
  }

  /** Cloud, a linked site: one pending acknowledge per alarm found, in one transaction; the others are refused NotFound. */
  function forwardAcknowledgements(orgId: OrgId, actor: Actor, siteCode: string, alarmIds: string[], comment: string | null) {
    return db.transaction().execute(async (trx) => {
      const results: Array<{ alarmId: string; status: 'pending' | 'refused'; commandId?: string; code?: string }> = []
      for (const alarmId of alarmIds) {
        if (!(await findAlarm(trx, orgId, siteCode, alarmId))) {
          results.push({ alarmId, status: 'refused', code: 'NotFound' })
          continue
        }
        const body = comment === null ? {} : { comment }
        const command = await link!.commands.enqueue(trx, orgId, { siteCode, alarmId, action: 'acknowledge', body, actor })
        results.push({ alarmId, status: 'pending', commandId: command.commandId })
      }
      return { pending: results.filter((r) => r.status === 'pending').length, results }
    })
  }

  /** The shelve's end, checked against this server's clock: after now, at most MAX_SHELVE_MS ahead. */
  function shelveUntil(until: string): number {
    const untilMs = instantOf(until, '/until')
    const now = clock.now()
    if (untilMs <= now) throw invalidField('/until', 'must be in the future')
    if (untilMs > now + MAX_SHELVE_MS) throw invalidField('/until', `must be at most ${MAX_SHELVE_MS / 86_400_000} days ahead; use out of service for longer`)
    return untilMs
  }

  /** An action on one alarm, by its route name and checked body (forward.ts checks a forwarded one). */
  function perform(orgId: OrgId, actor: Actor, siteCode: string, alarmId: string, request: CheckedAction, settle?: SettleApplied) {
    const { action, comment } = request
    if (action === 'shelve') return act(orgId, actor, siteCode, alarmId, 'shelve', comment, shelveUntil(request.until), settle)
    return act(orgId, actor, siteCode, alarmId, OPERATOR_ACTIONS[action], comment, undefined, settle)
  }

  /**
   * The alarm with its latest MAX_LISTED_HISTORY transitions, oldest first; `historyTruncated` when earlier ones are
   * left out (an alarm left open and flapping for months gathers hundreds of thousands): `history` pages them all.
   */
  async function read(orgId: OrgId, siteCode: string, alarmId: string) {
    const row = await findAlarm(db, orgId, siteCode, alarmId)
    if (!row) throw new NotFound()
    const latest = await listAlarmHistory(db, orgId, siteCode, alarmId, { limit: MAX_LISTED_HISTORY + 1, latest: true })
    const history = latest.slice(0, MAX_LISTED_HISTORY).reverse().map(toTransition)
    return { ...toAlarm(row), history, ...(latest.length > MAX_LISTED_HISTORY ? { historyTruncated: true as const } : {}) }
  }

  /** A batch of a site not linked: events for sources `known` does not return, or stamped in the future, are refused one by one. */
  async function ingestChecked(orgId: OrgId, actor: EventActor, siteCode: string, events: AlarmEventInput[], known: (ids: string[]) => Promise<Set<string>>) {
    // No upfront expiry here: the batch ends each shelve at its expiry in event time (ingest.ts).
    // Every instant is read before anything is written: one unreadable refuses the batch, as the schema would.
    const instants = events.map((e, index) => instantOf(e.occurredAt, `/events/${index}/occurredAt`))
    const now = clock.now()
    const results: EventResult[] = events.map((e) => ({ eventId: e.eventId, status: 'accepted', alarmId: null }))
    const seen = new Set<string>()
    const checked: CheckedEvent[] = []
    events.forEach((event, index) => {
      const occurredAt = instants[index]!
      if (seen.has(event.eventId)) results[index]!.status = 'duplicate'
      else if (occurredAt > now + MAX_FUTURE_SKEW_MS)
        refuse(results[index]!, 'OccurredInFuture', `occurredAt is more than ${MAX_FUTURE_SKEW_MS / 60_000} minutes ahead of the server clock`)
      else checked.push({ index, event, occurredAt })
      seen.add(event.eventId)
    })
    const sources = await known([...new Set(checked.map((c) => c.event.instanceId))])
    const accepted = checked.filter(
      (c) => sources.has(c.event.instanceId) || refuse(results[c.index]!, 'UnknownInstance', `no instance ${c.event.instanceId} in this site`),
    )
    const outcomes = await writeAlarms(orgId, siteCode, (trx) => applyEventBatch(trx, orgId, siteCode, actor, now, accepted))
    for (const [index, outcome] of outcomes) Object.assign(results[index]!, outcome)
    const tally = (s: EventResult['status']) => results.filter((r) => r.status === s).length
    return { accepted: tally('accepted'), duplicates: tally('duplicate'), refused: tally('refused'), results }
  }

  return {
    /**
     * Stores a gateway's batch: events for unknown instances or stamped in the future are refused one by one, a
     * resent event id is a duplicate, and the accepted ones land in one transaction (retried when it lost a race).
     */
    async ingest(orgId: OrgId, actor: Actor, siteCode: string, events: AlarmEventInput[]) {
      await sites.require(orgId, siteCode)
      if (await isLinked(orgId, siteCode)) throw new AlarmEventsFromSiteServer(siteCode)
      return ingestChecked(orgId, actor, siteCode, events, (ids) => instances.existingIds(orgId, siteCode, ids))
    },

    /**
     * Events the server itself raises about equipment that is not an instance (the edges area: a controller that
     * stopped communicating, `instanceId` its controller id), under the same rules as a gateway's batch (dedup by event
     * id, one open alarm per source), recorded as by `system` (`subject` names the raiser). Throws
     * AlarmEventsFromSiteServer in the cloud for a linked site.
     */
    async raiseSystemEvents(orgId: OrgId, subject: string, siteCode: string, events: AlarmEventInput[]) {
      await sites.require(orgId, siteCode)
      if (await isLinked(orgId, siteCode)) throw new AlarmEventsFromSiteServer(siteCode)
      return ingestChecked(orgId, { kind: 'system', subject }, siteCode, events, async (ids) => new Set(ids))
    },

    /** One page, newest change first; keyset on (changed_at, id), so concurrent inserts never shift a page. */
    async list(orgId: OrgId, siteCode: string, query: ListAlarmsInput) {
      await sites.require(orgId, siteCode)
      await expireShelves(orgId, siteCode)
      const limit = query.limit ?? 100
      const key = decodeCursor(query.cursor, ['number', 'string'])
      const rows = await listAlarmsBySite(db, orgId, siteCode, {
        limit,
        before: key && { changedAt: key[0] as number, id: key[1] as string },
        instanceId: query.instanceId,
        states: query.state,
        priorities: query.priority,
      })
      return toPage(rows, limit, toAlarm, (r) => [r.changed_at, r.id])
    },

    /** Every transition of the alarm, oldest first, a page at a time; NotFound when absent or in another site or organisation. */
    async history(orgId: OrgId, siteCode: string, alarmId: string, query: { limit?: number; cursor?: string }) {
      await sites.require(orgId, siteCode)
      if (!(await findAlarm(db, orgId, siteCode, alarmId))) throw new NotFound()
      const limit = query.limit ?? 100
      const after = decodeCursor(query.cursor, ['number'])
      const rows = await listAlarmHistory(db, orgId, siteCode, alarmId, { limit: limit + 1, afterSeq: after?.[0] as number | undefined })
      return toPage(rows, limit, toTransition, (r) => [r.seq])
    },

    /** The alarm with its latest transitions, oldest first; NotFound when absent or in another site or organisation. */
    async get(orgId: OrgId, siteCode: string, alarmId: string) {
      await sites.require(orgId, siteCode)
      await expireShelves(orgId, siteCode)
      const alarm = await read(orgId, siteCode, alarmId)
      if (!(await isLinked(orgId, siteCode))) return alarm
      return { ...alarm, pendingCommands: await link!.commands.countPending(db, orgId, siteCode, alarmId) }
    },

    /** ISA-18.2 acknowledge: active unack → active ack, returned unack → normal. AlarmStateConflict otherwise. */
    acknowledge: (orgId: OrgId, actor: Actor, siteCode: string, alarmId: string, comment: string | null) =>
      forwardOr(orgId, actor, siteCode, alarmId, 'acknowledge', comment === null ? {} : { comment }, () =>
        act(orgId, actor, siteCode, alarmId, 'acknowledge', comment),
      ),

    /** Acknowledges each alarm it can, in one transaction; the others are reported, not failed. */
    async acknowledgeMany(orgId: OrgId, actor: Actor, siteCode: string, alarmIds: string[], comment: string | null) {
      await sites.require(orgId, siteCode)
      if (await isLinked(orgId, siteCode)) return new ForwardedToSite(await forwardAcknowledgements(orgId, actor, siteCode, alarmIds, comment))
      await expireShelves(orgId, siteCode)
      const results = await writeAlarms(orgId, siteCode, async (trx) => {
        const out: Array<{ alarmId: string; status: 'acknowledged' | 'refused'; code?: string }> = []
        for (const alarmId of alarmIds) {
          const row = await findAlarm(trx, orgId, siteCode, alarmId)
          if (!row) {
            out.push({ alarmId, status: 'refused', code: 'NotFound' })
            continue
          }
          try {
            await applyAction(trx, orgId, actor, row, { action: 'acknowledge', at: clock.now(), comment })
            out.push({ alarmId, status: 'acknowledged' })
          } catch (err) {
            if (!(err instanceof AlarmStateConflict)) throw err
            out.push({ alarmId, status: 'refused', code: err.code })
          }
        }
        return out
      })
      return { acknowledged: results.filter((r) => r.status === 'acknowledged').length, results }
    },

    /** Shelves until `until` (after now, at most MAX_SHELVE_MS ahead), with a comment. */
    shelve(orgId: OrgId, actor: Actor, siteCode: string, alarmId: string, comment: string, until: string) {
      const untilMs = shelveUntil(until)
      return forwardOr(orgId, actor, siteCode, alarmId, 'shelve', { comment, until }, () => act(orgId, actor, siteCode, alarmId, 'shelve', comment, untilMs))
    },
    unshelve: (orgId: OrgId, actor: Actor, siteCode: string, alarmId: string, comment: string) =>
      forwardOr(orgId, actor, siteCode, alarmId, 'unshelve', { comment }, () => act(orgId, actor, siteCode, alarmId, 'unshelve', comment)),
    removeFromService: (orgId: OrgId, actor: Actor, siteCode: string, alarmId: string, comment: string) =>
      forwardOr(orgId, actor, siteCode, alarmId, 'out-of-service', { comment }, () => act(orgId, actor, siteCode, alarmId, 'remove_from_service', comment)),
    returnToService: (orgId: OrgId, actor: Actor, siteCode: string, alarmId: string, comment: string) =>
      forwardOr(orgId, actor, siteCode, alarmId, 'return-to-service', { comment }, () => act(orgId, actor, siteCode, alarmId, 'return_to_service', comment)),

    /**
     * Site server: applies an action forwarded from the cloud (a command) under the normal rules, as the cloud's actor;
     * `settle` runs in the same transaction with the alarm's new state. Throws the refusal (ValidationFailed for a body
     * the route would refuse, NotFound, AlarmStateConflict) with nothing changed.
     */
    async applyForwarded(orgId: OrgId, actor: Actor, siteCode: string, alarmId: string, action: string, body: unknown, settle: SettleApplied) {
      return perform(orgId, actor, siteCode, alarmId, checkForwardedAction(action, body), settle)
    },

    /** The site's alarm load over [from, to): rates per 10 minutes and position, floods, most frequent, chattering. */
    async load(orgId: OrgId, siteCode: string, query: AlarmLoadQueryInput): Promise<AlarmLoad> {
      const from = instantOf(query.from, '/from', 'query')
      const to = instantOf(query.to, '/to', 'query')
      if (to <= from) throw invalidField('/to', 'must be after from', 'query')
      if (to - from > MAX_LOAD_PERIOD_MS) throw invalidField('/to', `must be at most ${MAX_LOAD_PERIOD_MS / 86_400_000} days after from`, 'query')
      await sites.require(orgId, siteCode)
      const counts = await countActivations(db, orgId, siteCode, { from, to, intervalMs: INTERVAL_MS, windowMs: CHATTER_WINDOW_MS })
      return computeAlarmLoad(counts, { from, to, operatorPositions: query.operatorPositions ?? 1 })
    },
  }
}

function refuse(result: EventResult, code: string, detail: string): false {
  Object.assign(result, { status: 'refused', code, detail })
  return false
}

export type AlarmsService = ReturnType<typeof createAlarmsService>
