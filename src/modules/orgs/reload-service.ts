import type { Actor } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import type { ConfigHolder } from '../../config/holder.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { OrgId } from '../../ids.ts'
import { recordAudit } from '../audit/service.ts'
import { ConfigReloadRefused } from './errors.ts'
import type { ReloadResult } from './reload-schemas.ts'

/**
 * Configuration reload (spec 4.5). The audit row lands in the organisation whose host served the request
 * (audit rows are per organisation; a reload concerns the whole process): who, what changed, the reason.
 */
export function createReloadService(deps: { holder: ConfigHolder; handle: DatabaseHandle; clock: Clock }) {
  const { holder, handle, clock } = deps
  // One reload at a time in this process: each is compared with, and applied over, the one before it,
  // so "what changed" is exact and the configuration read last is the one in force.
  let queue: Promise<unknown> = Promise.resolve()
  return {
    /** Validates the whole configuration and swaps in its reloadable part once audited; throws ConfigReloadRefused (422). */
    reload(orgId: OrgId, actor: Actor, reason: string | null): Promise<ReloadResult> {
      const run = queue.then(() => reloadNow(orgId, actor, reason))
      queue = run.catch(() => {})
      return run
    },
  }

  async function reloadNow(orgId: OrgId, actor: Actor, reason: string | null): Promise<ReloadResult> {
    const plan = holder.prepare()
    const why = reason === null ? {} : { reason }
    if (!plan.ok) {
      await handle.db
        .transaction()
        .execute((trx) =>
          recordAudit(trx, clock, orgId, actor, { action: 'config.reload_refused', target: 'config', detail: { ...why, problems: plan.problems } }),
        )
      throw new ConfigReloadRefused(plan.problems)
    }
    await handle.db.transaction().execute((trx) =>
      recordAudit(trx, clock, orgId, actor, {
        action: 'config.reloaded',
        target: 'config',
        detail: { ...why, changed: plan.changed, requiresRestart: plan.requiresRestart },
      }),
    )
    plan.apply()
    return { reloadedAt: new Date(clock.now()).toISOString(), changed: plan.changed, requiresRestart: plan.requiresRestart }
  }
}

export type ReloadService = ReturnType<typeof createReloadService>
