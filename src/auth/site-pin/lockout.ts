import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { OrgId } from '../../ids.ts'
import { clearSignInFailures, countSignInFailure, findSignInFailures, setLockedUntil } from './lockout-store.ts'

/** Failures before the first lock; each further failure doubles the delay, up to an hour. */
export const LOCK_THRESHOLD = 5
export const FIRST_LOCK_MS = 30_000
export const MAX_LOCK_MS = 3_600_000
/** A counter whose last failure is older than this starts again from zero. */
export const FAILURE_MEMORY_MS = 3_600_000

export function lockDelayMs(failures: number): number {
  if (failures < LOCK_THRESHOLD) return 0
  return Math.min(FIRST_LOCK_MS * 2 ** Math.min(failures - LOCK_THRESHOLD, 20), MAX_LOCK_MS)
}

export const accountSubject = (email: string) => `email:${email}`
export const addressSubject = (address: string) => `addr:${address}`

/**
 * Sign-in failure counters, one per account (by e-mail, known or not, so both cost the same writes) and one
 * per client address, in the database so that every process and a restart see the same locks.
 */
export function createLockout(deps: { handle: DatabaseHandle; clock: Clock }) {
  const db = deps.handle.db
  return {
    /** Epoch ms until which the subject is locked, or 0. */
    async lockedUntil(orgId: OrgId, subject: string): Promise<number> {
      const row = await findSignInFailures(db, orgId, subject)
      return row && row.locked_until > deps.clock.now() ? row.locked_until : 0
    },

    async recordFailure(orgId: OrgId, subjects: string[]): Promise<void> {
      const now = deps.clock.now()
      await db.transaction().execute(async (trx) => {
        for (const subject of subjects) {
          await countSignInFailure(trx, orgId, subject, now, now - FAILURE_MEMORY_MS)
          const row = await findSignInFailures(trx, orgId, subject)
          const delay = lockDelayMs(row?.failures ?? 0)
          if (delay > 0) await setLockedUntil(trx, orgId, subject, now + delay)
        }
      })
    },

    async clear(orgId: OrgId, subject: string): Promise<void> {
      await clearSignInFailures(db, orgId, subject)
    },
  }
}

export type Lockout = ReturnType<typeof createLockout>
