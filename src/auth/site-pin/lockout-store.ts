import { sql } from 'kysely'
import type { Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export function findSignInFailures(db: Db, orgId: OrgId, subject: string) {
  return db.selectFrom('site_sign_in_failures').select(['failures', 'last_failure_at', 'locked_until'])
    .where('org_id', '=', orgId).where('subject', '=', subject)
    .executeTakeFirst()
}

/** Counts one failure atomically (concurrent failures are never lost); older failures than `forgetBefore` start over. */
export function countSignInFailure(db: Db, orgId: OrgId, subject: string, at: number, forgetBefore: number) {
  return db.insertInto('site_sign_in_failures')
    .values({ org_id: orgId, subject, failures: 1, last_failure_at: at, locked_until: 0 })
    .onConflict((oc) => oc.columns(['org_id', 'subject']).doUpdateSet({
      failures: sql<number>`case when site_sign_in_failures.last_failure_at > ${forgetBefore} then site_sign_in_failures.failures + 1 else 1 end`,
      last_failure_at: at,
    }))
    .execute()
}

export function setLockedUntil(db: Db, orgId: OrgId, subject: string, lockedUntil: number) {
  return db.updateTable('site_sign_in_failures').set({ locked_until: lockedUntil })
    .where('org_id', '=', orgId).where('subject', '=', subject)
    .execute()
}

export function clearSignInFailures(db: Db, orgId: OrgId, subject: string) {
  return db.deleteFrom('site_sign_in_failures').where('org_id', '=', orgId).where('subject', '=', subject).execute()
}
