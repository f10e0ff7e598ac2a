/**
 * ISA-18.2 / IEC 62682 alarm states. The four process states follow from two flags (is the condition active,
 * has an operator acknowledged it); shelving and out of service are operator suppressions laid over them, and
 * the process state keeps moving underneath (an alarm that returns to normal while shelved comes back as
 * `normal` when unshelved).
 */
export const ALARM_STATES = ['active_unacknowledged', 'active_acknowledged', 'returned_unacknowledged', 'normal', 'shelved', 'out_of_service'] as const
export type AlarmState = (typeof ALARM_STATES)[number]

export const ALARM_PRIORITIES = ['critical', 'high', 'medium', 'low'] as const
export type AlarmPriority = (typeof ALARM_PRIORITIES)[number]

export interface LifecycleFlags {
  isActive: boolean
  isAcknowledged: boolean
  isOutOfService: boolean
  shelvedUntil: number | null
}

export function processState(isActive: boolean, isAcknowledged: boolean): AlarmState {
  if (isActive) return isAcknowledged ? 'active_acknowledged' : 'active_unacknowledged'
  return isAcknowledged ? 'normal' : 'returned_unacknowledged'
}

/** Out of service wins over shelved, which wins over the process state. */
export function effectiveState(f: LifecycleFlags): AlarmState {
  if (f.isOutOfService) return 'out_of_service'
  if (f.shelvedUntil !== null) return 'shelved'
  return processState(f.isActive, f.isAcknowledged)
}

/** An alarm stays open (holds its tag's one open slot) until it is normal and not suppressed. */
export function isOpen(f: LifecycleFlags): boolean {
  return effectiveState(f) !== 'normal'
}

/** Length-prefixed, so no two (instance, condition) pairs share a key (PostgreSQL text cannot hold a NUL separator). */
export function activeKey(instanceId: string, condition: string): string {
  return `${instanceId.length}:${instanceId}${condition}`
}

/** Why an operator action is refused in the current state, or undefined when it is allowed. */
export function refusal(action: OperatorAction, f: LifecycleFlags): string | undefined {
  const state = effectiveState(f)
  switch (action) {
    case 'acknowledge':
      return state === 'active_unacknowledged' || state === 'returned_unacknowledged' ? undefined : `an alarm in state ${state} has nothing to acknowledge`
    case 'shelve':
      return state === 'shelved' || state === 'out_of_service' ? `an alarm in state ${state} cannot be shelved` : undefined
    case 'unshelve':
      return state === 'shelved' ? undefined : `an alarm in state ${state} is not shelved`
    case 'remove_from_service':
      return state === 'out_of_service' ? 'the alarm is already out of service' : undefined
    case 'return_to_service':
      return state === 'out_of_service' ? undefined : `an alarm in state ${state} is not out of service`
  }
}

export type OperatorAction = 'acknowledge' | 'shelve' | 'unshelve' | 'remove_from_service' | 'return_to_service'

/** The actions an alarm's history records: its process events', its operators' and the shelve expiry's. */
export const TRANSITION_ACTIONS = [
  'activated',
  'returned',
  'acknowledged',
  'shelved',
  'unshelved',
  'shelve_expired',
  'removed_from_service',
  'returned_to_service',
] as const
export type TransitionAction = (typeof TRANSITION_ACTIONS)[number]

/** What an event did to its alarm (the event row's `effect`). */
export const EVENT_EFFECTS = ['activated', 'suppressed', 'returned', 'none'] as const
export type EventEffect = (typeof EVENT_EFFECTS)[number]

/** The flags after an allowed operator action (`refusal` returned undefined). */
export function applyOperatorAction(action: OperatorAction, f: LifecycleFlags, shelvedUntil?: number): LifecycleFlags {
  switch (action) {
    case 'acknowledge':
      return { ...f, isAcknowledged: true }
    case 'shelve':
      return { ...f, shelvedUntil: shelvedUntil ?? null }
    case 'unshelve':
      return { ...f, shelvedUntil: null }
    // Out of service replaces a shelve: the alarm is then maintained, not merely set aside for a while.
    case 'remove_from_service':
      return { ...f, isOutOfService: true, shelvedUntil: null }
    case 'return_to_service':
      return { ...f, isOutOfService: false }
  }
}

/** A process event applied to an open alarm's flags. Activation re-arms acknowledgement (ISA-18.2 re-alarm). */
export function applyProcessEvent(f: LifecycleFlags, becameActive: boolean): LifecycleFlags {
  return becameActive ? { ...f, isActive: true, isAcknowledged: false } : { ...f, isActive: false }
}
