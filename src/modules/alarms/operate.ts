import type { Actor } from '../../identity.ts'
import type { AlarmsTable, Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'
import { AlarmStateConflict } from './errors.ts'
import { activeKey, applyOperatorAction, effectiveState, isOpen, refusal, type OperatorAction, type TransitionAction } from './lifecycle.ts'
import { isUniqueViolation } from '../../db/constraint-errors.ts'
import { StaleWrite } from './retry.ts'
import { endShelveWindow, insertAlarmHistory, insertShelveWindow, updateAlarmIfVersion } from './store.ts'
import { flagsOf } from './view.ts'

/** History names of the operator actions. */
const ACTION_NAMES: Record<OperatorAction, TransitionAction> = {
  acknowledge: 'acknowledged',
  shelve: 'shelved',
  unshelve: 'unshelved',
  remove_from_service: 'removed_from_service',
  return_to_service: 'returned_to_service',
}

export interface ActionInput {
  action: OperatorAction
  at: number
  comment: string | null
  shelvedUntil?: number
}

/**
 * Applies one operator action to a row read in `trx` and records the transition. Throws AlarmStateConflict when
 * the state does not allow it (or when reopening a closed alarm would give its tag two open alarms), StaleWrite
 * when another writer changed the row since it was read.
 */
export async function applyAction(trx: Db, orgId: OrgId, actor: Actor, row: AlarmsTable, input: ActionInput): Promise<void> {
  const flags = flagsOf(row)
  const reason = refusal(input.action, flags)
  if (reason !== undefined) throw new AlarmStateConflict(reason)
  const next = applyOperatorAction(input.action, flags, input.shelvedUntil)
  const to = effectiveState(next)
  const changes = {
    is_acknowledged: next.isAcknowledged ? 1 : 0,
    is_out_of_service: next.isOutOfService ? 1 : 0,
    shelved_until: next.shelvedUntil,
    state: to,
    active_key: isOpen(next) ? activeKey(row.instance_id, row.condition) : null,
    changed_at: input.at,
  }
  let written: boolean
  try {
    written = await updateAlarmIfVersion(trx, orgId, row.site_code, row.id, row.version, changes)
  } catch (err) {
    // Only a closed alarm being shelved or taken out of service reopens; a newer alarm of its tag holds the slot.
    if (isUniqueViolation(err)) throw new AlarmStateConflict('another alarm of the same instance and condition is open; act on that one')
    throw err
  }
  if (!written) throw new StaleWrite()
  // The shelve window, kept so that events delivered late are judged by the window they occurred in (ingest.ts).
  if (input.action === 'shelve') {
    await insertShelveWindow(trx, orgId, row.site_code, row.id, row.version + 1, activeKey(row.instance_id, row.condition), input.at, input.shelvedUntil!)
  } else if (flags.shelvedUntil !== null && next.shelvedUntil === null) {
    await endShelveWindow(trx, orgId, row.site_code, row.id, input.at)
  }
  await insertAlarmHistory(trx, [
    {
      org_id: orgId,
      site_code: row.site_code,
      alarm_id: row.id,
      seq: row.version + 1,
      at: input.at,
      action: ACTION_NAMES[input.action],
      from_state: row.state,
      to_state: to,
      actor_kind: actor.kind,
      actor_id: actor.subject,
      comment: input.comment,
      event_id: null,
    },
  ])
}

/**
 * A shelve ends by itself at `shelved_until` (ISA-18.2): the alarm returns to its process state, recorded as a
 * `shelve_expired` transition by `system` at the expiry time. Applied lazily before every read and action of
 * the site, so filters by state see the truth; the version check makes two concurrent readers record it once.
 */
export async function expireShelvesIn(trx: Db, orgId: OrgId, rows: AlarmsTable[]): Promise<void> {
  for (const row of rows) {
    const until = row.shelved_until
    if (until === null) continue
    const next = { ...flagsOf(row), shelvedUntil: null }
    const to = effectiveState(next)
    const changes = { shelved_until: null, state: to, active_key: isOpen(next) ? row.active_key : null, changed_at: until }
    if (!(await updateAlarmIfVersion(trx, orgId, row.site_code, row.id, row.version, changes))) continue
    await insertAlarmHistory(trx, [
      {
        org_id: orgId,
        site_code: row.site_code,
        alarm_id: row.id,
        seq: row.version + 1,
        at: until,
        action: 'shelve_expired',
        from_state: row.state,
        to_state: to,
        actor_kind: 'system',
        actor_id: 'shelve-expiry',
        comment: null,
        event_id: null,
      },
    ])
  }
}
