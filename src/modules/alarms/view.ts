import type { AlarmHistoryTable, AlarmsTable } from '../../db/schema.ts'
import type { LifecycleFlags } from './lifecycle.ts'
import type { Alarm, AlarmTransition } from './schemas.ts'

const iso = (ms: number) => new Date(ms).toISOString()

export function flagsOf(row: Pick<AlarmsTable, 'is_active' | 'is_acknowledged' | 'is_out_of_service' | 'shelved_until'>): LifecycleFlags {
  return {
    isActive: row.is_active === 1,
    isAcknowledged: row.is_acknowledged === 1,
    isOutOfService: row.is_out_of_service === 1,
    shelvedUntil: row.shelved_until,
  }
}

export function toAlarm(row: AlarmsTable): Alarm {
  return {
    alarmId: row.id,
    siteId: row.site_code,
    instanceId: row.instance_id,
    condition: row.condition,
    priority: row.priority,
    state: row.state,
    isActive: row.is_active === 1,
    isAcknowledged: row.is_acknowledged === 1,
    shelvedUntil: row.shelved_until === null ? null : iso(row.shelved_until),
    message: row.message,
    value: row.value,
    limit: row.limit_value,
    activationCount: row.activation_count,
    raisedAt: iso(row.raised_at),
    lastEventAt: iso(row.last_event_at),
    changedAt: iso(row.changed_at),
  }
}

export function toTransition(row: AlarmHistoryTable): AlarmTransition {
  return {
    seq: row.seq,
    at: iso(row.at),
    action: row.action,
    fromState: row.from_state,
    toState: row.to_state,
    actorKind: row.actor_kind,
    actorId: row.actor_id,
    comment: row.comment,
    eventId: row.event_id,
  }
}
