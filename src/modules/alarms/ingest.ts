import type { Actor } from '../../auth/principal.ts'
import type { AlarmEventsTable, AlarmHistoryTable, AlarmsTable, Db } from '../../db/schema.ts'
import { newId, type OrgId } from '../../ids.ts'
import { activeKey, applyProcessEvent, effectiveState, isOpen, isSuppressed } from './lifecycle.ts'
import { StaleWrite } from './retry.ts'
import type { AlarmEventInput } from './schemas.ts'
import { findKnownEventIds, findOpenAlarms, insertAlarmEvents, insertAlarmHistory, insertAlarms, updateAlarmIfVersion } from './store.ts'
import { flagsOf } from './view.ts'

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
  row: AlarmsTable
  /** The version read from the database; null for an alarm raised by this batch. */
  readVersion: number | null
  isDirty: boolean
}

/**
 * Applies a batch of checked events inside `trx`, in order of occurrence: stored event ids are duplicates, an
 * activation raises an alarm (or re-arms the open one), a return to normal moves the open one on. Events older
 * than the alarm's last applied event are stored but change nothing (a late resend must not rewind an alarm).
 * Throws StaleWrite, or a unique violation, when a concurrent writer won; the caller retries the transaction.
 */
export async function applyEventBatch(trx: Db, orgId: OrgId, siteCode: string, actor: Actor, now: number, items: CheckedEvent[]): Promise<Map<number, Outcome>> {
  const outcomes = new Map<number, Outcome>()
  const known = await findKnownEventIds(trx, orgId, siteCode, items.map((i) => i.event.eventId))
  const fresh = items.filter((item) => {
    if (!known.has(item.event.eventId)) return true
    outcomes.set(item.index, { status: 'duplicate', alarmId: known.get(item.event.eventId) ?? null })
    return false
  }).sort((a, b) => a.occurredAt - b.occurredAt)

  const open = new Map<string, Working>()
  for (const row of await findOpenAlarms(trx, orgId, siteCode, [...new Set(fresh.map((i) => activeKey(i.event.instanceId, i.event.condition)))])) {
    open.set(row.active_key!, { row, readVersion: row.version, isDirty: false })
  }
  const touched: Working[] = [...open.values()]
  const history: AlarmHistoryTable[] = []
  const events: AlarmEventsTable[] = []

  const transition = (w: Working, item: CheckedEvent, action: string, from: string) => {
    w.row.version += 1
    history.push({
      org_id: orgId, site_code: siteCode, alarm_id: w.row.id, seq: w.row.version, at: item.occurredAt, action,
      from_state: from, to_state: w.row.state, actor_kind: actor.kind, actor_id: actor.subject, comment: null, event_id: item.event.eventId,
    })
  }

  for (const item of fresh) {
    const e = item.event
    const key = activeKey(e.instanceId, e.condition)
    let w = open.get(key)
    let effect = 'none'
    const isNewer = w !== undefined && item.occurredAt >= w.row.last_event_at
    if (e.state === 'active' && w === undefined) {
      w = { row: raise(orgId, siteCode, key, item, now), readVersion: null, isDirty: true }
      open.set(key, w)
      touched.push(w)
      transition(w, item, 'activated', 'normal')
      effect = 'activated'
    } else if (w !== undefined && isNewer) {
      const row = w.row
      const flags = flagsOf(row)
      Object.assign(row, { message: e.message ?? row.message, value: e.value ?? row.value, limit_value: e.limit ?? row.limit_value, last_event_at: item.occurredAt, changed_at: now })
      w.isDirty = true
      if (e.state === 'active' && !flags.isActive) {
        const next = applyProcessEvent(flags, true)
        const from = row.state
        Object.assign(row, { is_active: 1, is_acknowledged: 0, state: effectiveState(next), activation_count: row.activation_count + 1, priority: e.priority })
        transition(w, item, 'activated', from)
        effect = isSuppressed(flags) ? 'suppressed' : 'activated'
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
      org_id: orgId, site_code: siteCode, event_id: e.eventId, alarm_id: alarmId, instance_id: e.instanceId, condition: e.condition,
      priority: e.priority, is_active: e.state === 'active' ? 1 : 0, occurred_at: item.occurredAt, received_at: now,
      message: e.message ?? null, value: e.value ?? null, limit_value: e.limit ?? null, effect,
    })
  }

  // Updates first: an alarm closed by this batch frees its tag's slot before a new one of the same tag is inserted.
  for (const w of touched) {
    if (w.readVersion === null || !w.isDirty) continue
    // A value-only refresh still bumps the version, so a concurrent writer notices it.
    const { org_id: _o, site_code: _s, id: _i, version, ...changes } = w.row
    const target = Math.max(version, w.readVersion + 1)
    if (!(await updateAlarmIfVersion(trx, orgId, siteCode, w.row.id, w.readVersion, { ...changes }, target))) throw new StaleWrite()
  }
  await insertAlarms(trx, touched.filter((w) => w.readVersion === null).map((w) => w.row))
  await insertAlarmHistory(trx, history)
  await insertAlarmEvents(trx, events)
  return outcomes
}

function raise(orgId: OrgId, siteCode: string, key: string, item: CheckedEvent, now: number): AlarmsTable {
  const e = item.event
  return {
    org_id: orgId, site_code: siteCode, id: newId('alm', now), instance_id: e.instanceId, condition: e.condition, priority: e.priority,
    message: e.message ?? null, value: e.value ?? null, limit_value: e.limit ?? null,
    state: 'active_unacknowledged', is_active: 1, is_acknowledged: 0, is_out_of_service: 0, shelved_until: null, active_key: key,
    activation_count: 1, raised_at: item.occurredAt, last_event_at: item.occurredAt, changed_at: now, created_at: now, version: 0,
  }
}
