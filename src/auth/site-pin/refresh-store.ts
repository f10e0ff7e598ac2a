import type { Db, SiteRefreshTokensTable } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export function insertRefreshToken(db: Db, row: SiteRefreshTokensTable) {
  return db.insertInto('site_refresh_tokens').values(row).execute()
}

export function findRefreshToken(db: Db, orgId: OrgId, tokenHash: string) {
  return db
    .selectFrom('site_refresh_tokens')
    .select(['id', 'family_id', 'user_id', 'token_version', 'expires_at', 'family_expires_at', 'used_at', 'revoked_at'])
    .where('org_id', '=', orgId)
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst()
}

/** Marks a token used once: a second (concurrent) use matches no row and is treated as reuse. */
export function markRefreshTokenUsed(db: Db, orgId: OrgId, id: string, at: number) {
  return db
    .updateTable('site_refresh_tokens')
    .set({ used_at: at })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
}

export function revokeRefreshFamily(db: Db, orgId: OrgId, familyId: string, at: number) {
  return db
    .updateTable('site_refresh_tokens')
    .set({ revoked_at: at })
    .where('org_id', '=', orgId)
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .execute()
}

/** Housekeeping on each sign-in: a user's rows past their family's end are of no further use. */
export function deleteExpiredRefreshTokens(db: Db, orgId: OrgId, userId: string, before: number) {
  return db.deleteFrom('site_refresh_tokens').where('org_id', '=', orgId).where('user_id', '=', userId).where('family_expires_at', '<', before).execute()
}
