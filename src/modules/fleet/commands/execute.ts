import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import { DomainError, invalidField } from '../../../errors/domain-error.ts'
import { ACTOR_KINDS, isActorKind, isRole, type Actor } from '../../../identity.ts'
import type { OrgId } from '../../../ids.ts'
import type { SettleApplied } from '../../alarms/forward.ts'
import { listCommands, settleCommand } from './store.ts'

/** What the site server's alarms service offers a forwarded action (alarms/service.ts `applyForwarded`). */
export interface ForwardedActionRunner {
  applyForwarded(orgId: OrgId, actor: Actor, siteCode: string, alarmId: string, action: string, body: unknown, settle: SettleApplied): Promise<unknown>
}

export interface ExecuteDeps {
  handle: DatabaseHandle
  clock: Clock
  alarms: ForwardedActionRunner
}

/** Commands settled per read of the pending ones; the loop reads again until none is left. */
const BATCH = 100

/** The command was settled by another run between our read and our write: nothing of it is applied again. */
class SettledMeanwhile extends Error {}

/**
 * Site server: applies the commands the cloud forwarded (pulled into `link_commands`), oldest first, each through the
 * alarms service's normal operation as the cloud's actor. An applied action and its settlement (`applied`, the alarm's
 * new state) commit in one transaction, so a crash never applies a command twice; a refusal under the rules settles it
 * `refused` with the problem's code and detail and changes nothing else. A busy database (503) or an unexpected error
 * stops the run with the rest still pending, so a later run resumes in order.
 */
export async function executePendingCommands(deps: ExecuteDeps, orgId: OrgId): Promise<{ applied: number; refused: number }> {
  const { handle, clock, alarms } = deps
  const tally = { applied: 0, refused: 0 }
  for (;;) {
    const pending = await listCommands(handle.db, orgId, { status: 'pending', limit: BATCH })
    if (pending.length === 0) return tally
    for (const command of pending) {
      try {
        const { actor, body } = decode(command.actor, command.body)
        await alarms.applyForwarded(orgId, actor, command.site_code, command.alarm_id, command.action, body, async (trx, alarm) => {
          if (!(await settleCommand(trx, orgId, command.id, 'applied', JSON.stringify({ alarm }), clock.now()))) throw new SettledMeanwhile()
        })
        tally.applied++
      } catch (err) {
        if (err instanceof SettledMeanwhile) continue
        if (!(err instanceof DomainError) || err.status >= 500) throw err
        const result = JSON.stringify({ code: err.code, detail: err.message })
        if (await settleCommand(handle.db, orgId, command.id, 'refused', result, clock.now())) tally.refused++
      }
    }
  }
}

/** A command's actor and body arrive over the link as JSON text: a malformed one is refused, not applied. */
function decode(actorText: string, bodyText: string): { actor: Actor; body: unknown } {
  let actor: unknown
  let body: unknown
  try {
    actor = JSON.parse(actorText)
    body = JSON.parse(bodyText)
  } catch {
    throw invalidField('/', 'the command is not JSON')
  }
  const a = actor as Partial<Record<keyof Actor, unknown>> | null
  // The kind is recorded in the alarm's history, which the link carries back: one its rows may not hold would stop it.
  if (typeof a?.kind !== 'string' || !isActorKind(a.kind) || typeof a.subject !== 'string' || typeof a.role !== 'string' || !isRole(a.role)) {
    throw invalidField('/actor', `must name the kind (${ACTOR_KINDS.join(', ')}), subject and role of who took the action`)
  }
  const { kind } = a
  return {
    actor: typeof a.account === 'string' ? { kind, subject: a.subject, role: a.role, account: a.account } : { kind, subject: a.subject, role: a.role },
    body,
  }
}
