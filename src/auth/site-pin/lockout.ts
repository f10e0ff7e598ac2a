import type { Actor } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'
import { clearSignInFailures, findSignInFailures, refundSignInAttempt, reserveSignInAttempt, setLockedUntil } from './lockout-store.ts'

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

/** The attempt may check a PIN; per subject, the lock its reservation set (0: none), for `release`. */
export interface Reserved {
  refusedBy?: undefined
  locksSet: Map<string, number>
}
/** The attempt must not check a PIN: `refusedBy` is locked until `lockedUntil` (epoch ms). */
export interface Refused {
  refusedBy: string
  lockedUntil: number
}

/** Writes an audit row in the caller's transaction: the audit module's recordAudit, bound to a clock by app.ts. */
export type RecordAudit = (trx: Db, orgId: OrgId, actor: Actor, entry: { action: string; target: string; detail?: Record<string, unknown> }) => Promise<void>

class SubjectLocked extends Error {
  constructor(readonly refusal: Refused) {
    super('locked')
  }
}

/**
 * Sign-in failure counters, one per account (by normalised e-mail, known or not, so an unknown e-mail locks and
 * answers like a known one) and one per client address, in the database so that every process and a restart see
 * the same locks. An attempt is reserved (counted as a failure) before its PIN is checked, so however many
 * attempts run at once, in however many processes, no more than LOCK_THRESHOLD PINs of a subject are checked
 * before it locks, and one per lock period after.
 */
export function createLockout(deps: {
  handle: DatabaseHandle
  clock: Clock
  /** The site users' e-mail normalisation: an account's lock is keyed by the form its e-mail is stored under. */
  normaliseEmail: (email: string) => string
  audit: RecordAudit
}) {
  const db = deps.handle.db
  return {
    /** Reserves one PIN check on every subject, all or none (a refused attempt counts nowhere). */
    async reserve(orgId: OrgId, subjects: string[]): Promise<Reserved | Refused> {
      const now = deps.clock.now()
      try {
        return await db.transaction().execute(async (trx) => {
          const locksSet = new Map<string, number>()
          for (const subject of subjects) {
            const failures = await reserveSignInAttempt(trx, orgId, subject, now, now - FAILURE_MEMORY_MS)
            if (failures === undefined) {
              const row = await findSignInFailures(trx, orgId, subject)
              throw new SubjectLocked({ refusedBy: subject, lockedUntil: row?.locked_until ?? now })
            }
            const delay = lockDelayMs(failures)
            if (delay > 0) await setLockedUntil(trx, orgId, subject, now + delay)
            locksSet.set(subject, delay > 0 ? now + delay : 0)
          }
          return { locksSet }
        })
      } catch (err) {
        if (err instanceof SubjectLocked) return err.refusal
        throw err
      }
    },

    /** The PIN was right: the reservation on `subject` was no failure, so it is taken back with any lock it set. */
    async release(orgId: OrgId, subject: string, reserved: Reserved): Promise<void> {
      await refundSignInAttempt(db, orgId, subject, reserved.locksSet.get(subject) ?? 0)
    },

    async clear(orgId: OrgId, subject: string): Promise<void> {
      await clearSignInFailures(db, orgId, subject)
    },

    /** An operator ends the lock of an e-mail (known or not) and forgets its failures; audited as `site_user.unlocked`. */
    async unlockEmail(orgId: OrgId, actor: Actor, email: string): Promise<{ wasLockedUntil: number }> {
      const normalised = deps.normaliseEmail(email)
      return db.transaction().execute(async (trx) => {
        const row = await clearSignInFailures(trx, orgId, accountSubject(normalised))
        const now = deps.clock.now()
        const wasLockedUntil = row && row.locked_until > now ? row.locked_until : 0
        await deps.audit(trx, orgId, actor, {
          action: 'site_user.unlocked',
          target: normalised,
          detail: { failures: row?.failures ?? 0, lockedUntil: wasLockedUntil ? new Date(wasLockedUntil).toISOString() : null },
        })
        return { wasLockedUntil }
      })
    },
  }
}

export type Lockout = ReturnType<typeof createLockout>
