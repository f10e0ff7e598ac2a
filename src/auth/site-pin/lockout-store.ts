import { sql } from 'kysely'
import type { Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export function findSignInFailures(db: Db, orgId: OrgId, subject: string) {
  return db
    .selectFrom('site_sign_in_failures')
    .select(['failures', 'last_failure_at', 'locked_until'])
    .where('org_id', '=', orgId)
    .where('subject', '=', subject)
    .executeTakeFirst()
}

/**
 * Counts one attempt as a failure unless the subject is locked at `at`: answers the new count, or undefined when
 * locked (nothing changes). One statement, so the lock test and the count cannot be split by a concurrent attempt
 * (PostgreSQL re-evaluates the WHERE on the row's newest version once a concurrent writer commits; SQLite has one
 * writer). Failures older than `forgetBefore` start over.
 */
export async function reserveSignInAttempt(db: Db, orgId: OrgId, subject: string, at: number, forgetBefore: number): Promise<number | undefined> {
  const row = await db
    .insertInto('site_sign_in_failures')
    .values({ org_id: orgId, subject, failures: 1, last_failure_at: at, locked_until: 0 })
    .onConflict((oc) =>
      oc
        .columns(['org_id', 'subject'])
        .doUpdateSet({
          failures: sql<number>`case when site_sign_in_failures.last_failure_at > ${forgetBefore} then site_sign_in_failures.failures + 1 else 1 end`,
          last_failure_at: at,
        })
        .where('site_sign_in_failures.locked_until', '<=', at),
    )
    .returning('failures')
    .executeTakeFirst()
  return row?.failures
}

export function setLockedUntil(db: Db, orgId: OrgId, subject: string, lockedUntil: number) {
  return db.updateTable('site_sign_in_failures').set({ locked_until: lockedUntil }).where('org_id', '=', orgId).where('subject', '=', subject).execute()
}

/** Takes back one reserved attempt; the lock it set, if any (`lockSet`), goes with it. */
export function refundSignInAttempt(db: Db, orgId: OrgId, subject: string, lockSet: number) {
  return db
    .updateTable('site_sign_in_failures')
    .set({
      failures: sql<number>`failures - 1`,
      locked_until: sql<number>`case when locked_until = ${lockSet} then 0 else locked_until end`,
    })
    .where('org_id', '=', orgId)
    .where('subject', '=', subject)
    .where('failures', '>', 0)
    .execute()
}

export function clearSignInFailures(db: Db, orgId: OrgId, subject: string) {
  return db
    .deleteFrom('site_sign_in_failures')
    .where('org_id', '=', orgId)
    .where('subject', '=', subject)
    .returning(['failures', 'locked_until'])
    .executeTakeFirst()
}
