import type { RuleBreak } from '../../http/validation.ts'
import { ACTOR_KINDS } from '../../identity.ts'
import type { AlarmsTable } from '../../db/schema.ts'
import { activeKey, ALARM_PRIORITIES, ALARM_STATES, EVENT_EFFECTS, effectiveState, isOpen, TRANSITION_ACTIONS } from './lifecycle.ts'
import { flagsOf } from './view.ts'

// The alarm tables are written by the ingestion and the operators' actions, never from a body as they stand: these
// are the rules those writers keep, for rows that arrive without them (a tenant package, the fleet link's changes).
// A row breaking one would read back against the API's documented values, or (a crafted `active_key`) give a tag
// two open alarms. The pointers name the API's fields.

type Row = Readonly<Record<string, unknown>>

/** Who writes history rows: an actor, or the server itself (the shelve expiry, a stale gateway's alarm). */
const HISTORY_ACTOR_KINDS = [...ACTOR_KINDS, 'system'] as const

function oneOf(pointer: string, value: unknown, allowed: readonly unknown[]): RuleBreak | undefined {
  return allowed.includes(value) ? undefined : { pointer, message: `must be one of ${allowed.join(', ')}` }
}

function flag(pointer: string, value: unknown): RuleBreak | undefined {
  return value === 0 || value === 1 ? undefined : { pointer, message: 'must be 0 or 1' }
}

function ident(pointer: string, value: unknown): RuleBreak | undefined {
  return typeof value === 'string' && value.length >= 1 && value.length <= 100 ? undefined : { pointer, message: 'must be 1 to 100 characters' }
}

function text(pointer: string, value: unknown, min: 0 | 1): RuleBreak | undefined {
  if (value === null || (typeof value === 'string' && value.length >= min && value.length <= 500)) return undefined
  return { pointer, message: `must be ${min} to 500 characters, or null` }
}

function atLeastOne(pointer: string, value: unknown): RuleBreak | undefined {
  return typeof value === 'number' && value >= 1 ? undefined : { pointer, message: 'must be >= 1' }
}

/** The first rule an alarm row breaks: its values, its state as its flags give it, and its tag's one open slot. */
export function alarmRowBreak(row: Row): RuleBreak | undefined {
  const broken =
    ident('/instanceId', row.instance_id) ??
    ident('/condition', row.condition) ??
    oneOf('/priority', row.priority, ALARM_PRIORITIES) ??
    flag('/isActive', row.is_active) ??
    flag('/isAcknowledged', row.is_acknowledged) ??
    flag('/isOutOfService', row.is_out_of_service) ??
    text('/message', row.message, 0) ??
    atLeastOne('/activationCount', row.activation_count)
  if (broken) return broken
  const alarm = row as unknown as AlarmsTable
  const flags = flagsOf(alarm)
  const state = effectiveState(flags)
  if (alarm.state !== state) return { pointer: '/state', message: `must be ${state}, the state its flags give` }
  const key = isOpen(flags) ? activeKey(alarm.instance_id, alarm.condition) : null
  if (alarm.active_key !== key)
    return { pointer: '/activeKey', message: key === null ? 'must be null: the alarm is closed' : `must be ${key}: an open alarm holds its tag's key` }
  return undefined
}

/** The first rule an alarm event row breaks. */
export function alarmEventRowBreak(row: Row): RuleBreak | undefined {
  return (
    ident('/eventId', row.event_id) ??
    ident('/instanceId', row.instance_id) ??
    ident('/condition', row.condition) ??
    oneOf('/priority', row.priority, ALARM_PRIORITIES) ??
    flag('/isActive', row.is_active) ??
    text('/message', row.message, 0) ??
    oneOf('/effect', row.effect, EVENT_EFFECTS)
  )
}

/** The first rule an alarm history row breaks. */
export function alarmHistoryRowBreak(row: Row): RuleBreak | undefined {
  return (
    atLeastOne('/seq', row.seq) ??
    oneOf('/action', row.action, TRANSITION_ACTIONS) ??
    oneOf('/fromState', row.from_state, ALARM_STATES) ??
    oneOf('/toState', row.to_state, ALARM_STATES) ??
    oneOf('/actorKind', row.actor_kind, HISTORY_ACTOR_KINDS) ??
    text('/comment', row.comment, 1)
  )
}

/** The first rule a shelve window row breaks: it ends no earlier than it starts. */
export function alarmShelveRowBreak(row: Row): RuleBreak | undefined {
  const broken = atLeastOne('/seq', row.seq)
  if (broken) return broken
  return Number(row.ends_at) >= Number(row.starts_at) ? undefined : { pointer: '/endsAt', message: 'must not be before startsAt' }
}
