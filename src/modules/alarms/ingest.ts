import type { Actor } from '../../identity.ts'
import type { AlarmEventsTable, AlarmHistoryTable, AlarmsTable, Db } from '../../db/schema.ts'
import { newId, type OrgId } from '../../ids.ts'
import { activeKey, applyProcessEvent, effectiveState, isOpen, type EventEffect } from './lifecycle.ts'
import { StaleWrite } from './retry.ts'
import type { AlarmEventInput } from './schemas.ts'
import {
  findKnownEventIds,
  findOpenAlarms,
  findShelveWindowsEndingAfter,
  insertAlarmEvents,
  insertAlarmHistory,
  insertNewAlarms,
  updateAlarmsIfVersion,
  type OpenAlarm,
  type ShelveWindow,
} from './store.ts'
import { flagsOf } from './view.ts'
import { appendTo } from '../../grouping.ts'

/** Who applied a batch: a principal, or `system` for events the server raises itself (history's `actor_kind`). */
export type EventActor = Pick<Actor, 'kind' | 'subject'> | { kind: 'system'; subject: string }

export interface CheckedEvent {
  index: number
  event: AlarmEventInput
  occurredAt: number
}

export interface Outcome {
  status: 'accepted' | 'duplicate'
  alarmId: string | null
}

interface Working {
  row: OpenAlarm
  /** The version read from the database; null for an alarm raised by this batch. */
  readVersion: number | null
  isDirty: boolean
}

/**
 * Applies a batch of checked events inside `trx`, in order of occurrence: stored event ids are duplicates, an
 * activation raises an alarm (or re-arms the open one), a return to normal moves the open one on. Events older
 * than the alarm's last applied event are stored but change nothing (a late resend must not rewind an alarm).
 * A shelve ends at its expiry in event time: an event that occurred while the alarm was shelved is suppressed, one
 * after the expiry finds it back in its process state (the `shelve_expired` transition is recorded at the expiry,
 * between them), and a shelve that expired by `now` ends in this batch too, so reads and the alarm-load figures
 * (which count suppressed and annunciated activations) agree. Whether an activation is annunciated or suppressed is
 * judged in event time against the tag's shelve windows (`alarm_shelves`), whatever has happened since: an event
 * that occurred inside a shelve that a read, an unshelve or an earlier batch has already ended is suppressed, one
 * that occurred before the shelve began is annunciated although it arrives while the alarm is shelved. Set-based: three
 * lookups, then one multi-row statement per table (SQLite: per chunk under its parameter limit), the alarms read
 * written by one `UPDATE … FROM` (store.ts).
 * Throws StaleWrite, or a unique violation, when a concurrent writer won; the caller retries the transaction.
 */
export async function applyEventBatch(
  trx: Db,
  orgId: OrgId,
  siteCode: string,
  actor: EventActor,
  now: number,
  items: CheckedEvent[],
): Promise<Map<number, Outcome>> {
  const outcomes = new Map<number, Outcome>()
  const known = await findKnownEventIds(
    trx,
    orgId,
    siteCode,
    items.map((i) => i.event.eventId),
  )
  const fresh = items
    .filter((item) => {
      if (!known.has(item.event.eventId)) return true
      outcomes.set(item.index, { status: 'duplicate', alarmId: known.get(item.event.eventId) ?? null })
      return false
    })
    .sort((a, b) => a.occurredAt - b.occurredAt)

  const windows = new Map<string, ShelveWindow[]>()
  if (fresh.length > 0) {
    for (const w of await findShelveWindowsEndingAfter(trx, orgId, siteCode, fresh[0]!.occurredAt)) appendTo(windows, w.tagKey, w)
  }
  const shelvedAt = (key: string, at: number) => windows.get(key)?.some((w) => w.startsAt <= at && at < w.endsAt) ?? false

  const open = new Map<string, Working>()
  for (const row of await findOpenAlarms(trx, orgId, siteCode, [...new Set(fresh.map((i) => activeKey(i.event.instanceId, i.event.condition)))])) {
    open.set(row.active_key!, { row, readVersion: row.version, isDirty: false })
  }
  const touched: Working[] = [...open.values()]
  const raised: AlarmsTable[] = []
  const history: AlarmHistoryTable[] = []
  const events: AlarmEventsTable[] = []

  const transition = (w: Working, item: CheckedEvent, action: string, from: string) => {
    w.row.version += 1
    history.push({
      org_id: orgId,
      site_code: siteCode,
      alarm_id: w.row.id,
      seq: w.row.version,
      at: item.occurredAt,
      action,
      from_state: from,
      to_state: w.row.state,
      actor_kind: actor.kind,
      actor_id: actor.subject,
      comment: null,
      event_id: item.event.eventId,
    })
  }
  // As operate.ts `expireShelvesIn`: back to the process state at the expiry time, by `system`; a normal alarm closes.
  const expireShelf = (w: Working) => {
    const until = w.row.shelved_until!
    const from = w.row.state
    const next = { ...flagsOf(w.row), shelvedUntil: null }
    Object.assign(w.row, { shelved_until: null, state: effectiveState(next), changed_at: Math.max(w.row.changed_at, until) })
    if (!isOpen(next)) {
      open.delete(w.row.active_key!)
      w.row.active_key = null
    }
    w.isDirty = true
    w.row.version += 1
    history.push({
      org_id: orgId,
      site_code: siteCode,
      alarm_id: w.row.id,
      seq: w.row.version,
      at: until,
      action: 'shelve_expired',
      from_state: from,
      to_state: w.row.state,
      actor_kind: 'system',
      actor_id: 'shelve-expiry',
      comment: null,
      event_id: null,
    })
  }

  for (const item of fresh) {
    const e = item.event
    const key = activeKey(e.instanceId, e.condition)
    let w = open.get(key)
    const shelvedUntil = w?.row.shelved_until
    if (w !== undefined && shelvedUntil != null && shelvedUntil <= item.occurredAt && item.occurredAt >= w.row.last_event_at) {
      expireShelf(w)
      w = open.get(key)
    }
    let effect: EventEffect = 'none'
    const isNewer = w !== undefined && item.occurredAt >= w.row.last_event_at
    if (e.state === 'active' && w === undefined) {
      const row = raise(orgId, siteCode, key, item, now)
      raised.push(row)
      w = { row, readVersion: null, isDirty: true }
      open.set(key, w)
      touched.push(w)
      transition(w, item, 'activated', 'normal')
      // A closed alarm's tag may have been shelved when the event occurred: the new alarm stands, not annunciated then.
      effect = shelvedAt(key, item.occurredAt) ? 'suppressed' : 'activated'
    } else if (w !== undefined && isNewer) {
      const row = w.row
      const flags = flagsOf(row)
      Object.assign(row, {
        message: e.message ?? row.message,
        value: e.value ?? row.value,
        limit_value: e.limit ?? row.limit_value,
        last_event_at: item.occurredAt,
        changed_at: now,
      })
      w.isDirty = true
      if (e.state === 'active' && !flags.isActive) {
        const next = applyProcessEvent(flags, true)
        const from = row.state
        Object.assign(row, { is_active: 1, is_acknowledged: 0, state: effectiveState(next), activation_count: row.activation_count + 1, priority: e.priority })
        transition(w, item, 'activated', from)
        effect = flags.isOutOfService || shelvedAt(key, item.occurredAt) ? 'suppressed' : 'activated'
      } else if (e.state === 'normal' && flags.isActive) {
        const next = applyProcessEvent(flags, false)
        const from = row.state
        Object.assign(row, { is_active: 0, state: effectiveState(next) })
        if (!isOpen(next)) {
          row.active_key = null
          open.delete(key)
        }
        transition(w, item, 'returned', from)
        effect = 'returned'
      }
    }
    const alarmId = w?.row.id ?? null
    outcomes.set(item.index, { status: 'accepted', alarmId })
    events.push({
      org_id: orgId,
      site_code: siteCode,
      event_id: e.eventId,
      alarm_id: alarmId,
      instance_id: e.instanceId,
      condition: e.condition,
      priority: e.priority,
      is_active: e.state === 'active' ? 1 : 0,
      occurred_at: item.occurredAt,
      received_at: now,
      message: e.message ?? null,
      value: e.value ?? null,
      limit_value: e.limit ?? null,
      effect,
    })
  }

  // Shelves of the alarms read that have expired by now end here too (after every event that occurred before).
  for (const w of touched) {
    if (w.row.shelved_until !== null && w.row.shelved_until <= now && w.row.active_key !== null) expireShelf(w)
  }

  // Updates first: an alarm closed by this batch frees its tag's slot before a new one of the same tag is inserted.
  const writes = touched
    .filter((w) => w.readVersion !== null && w.isDirty)
    .map((w) => {
      // A value-only refresh still bumps the version, so a concurrent writer notices it.
      w.row.version = Math.max(w.row.version, w.readVersion! + 1)
      return { row: w.row, readVersion: w.readVersion! }
    })
  if ((await updateAlarmsIfVersion(trx, orgId, siteCode, writes)) !== writes.length) throw new StaleWrite()
  if ((await insertNewAlarms(trx, raised)) !== raised.length) throw new StaleWrite()
  await insertAlarmHistory(trx, history)
  await insertAlarmEvents(trx, events)
  return outcomes
}

function raise(orgId: OrgId, siteCode: string, key: string, item: CheckedEvent, now: number): AlarmsTable {
  const e = item.event
  return {
    org_id: orgId,
    site_code: siteCode,
    id: newId('alm', now),
    instance_id: e.instanceId,
    condition: e.condition,
    priority: e.priority,
    message: e.message ?? null,
    value: e.value ?? null,
    limit_value: e.limit ?? null,
    state: 'active_unacknowledged',
    is_active: 1,
    is_acknowledged: 0,
    is_out_of_service: 0,
    shelved_until: null,
    active_key: key,
    activation_count: 1,
    raised_at: item.occurredAt,
    last_event_at: item.occurredAt,
    changed_at: now,
    created_at: now,
    version: 0,
  }
}
