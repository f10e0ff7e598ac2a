import type { Db, SiteSigningKeysTable } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export function insertSigningKey(db: Db, row: SiteSigningKeysTable) {
  return db.insertInto('site_signing_keys').values(row).execute()
}

export function findNewestActiveSigningKey(db: Db, orgId: OrgId) {
  return db
    .selectFrom('site_signing_keys')
    .select(['kid', 'alg', 'sealed_private_jwk'])
    .where('org_id', '=', orgId)
    .where('retired_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .executeTakeFirst()
}

/** Keys that still verify: active ones, and retired ones whose tokens may not have expired yet. */
export function listVerificationKeys(db: Db, orgId: OrgId, retiredAfter: number) {
  return db
    .selectFrom('site_signing_keys')
    .select(['kid', 'alg', 'public_jwk', 'created_at', 'retired_at'])
    .where('org_id', '=', orgId)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', retiredAfter)]))
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .execute()
}

export function findVerificationKey(db: Db, orgId: OrgId, kid: string, retiredAfter: number) {
  return db
    .selectFrom('site_signing_keys')
    .select(['alg', 'public_jwk'])
    .where('org_id', '=', orgId)
    .where('kid', '=', kid)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', retiredAfter)]))
    .executeTakeFirst()
}

export function retireActiveSigningKeys(db: Db, orgId: OrgId, at: number) {
  return db.updateTable('site_signing_keys').set({ retired_at: at }).where('org_id', '=', orgId).where('retired_at', 'is', null).execute()
}

export function deleteSigningKeysRetiredBefore(db: Db, orgId: OrgId, before: number) {
  return db.deleteFrom('site_signing_keys').where('org_id', '=', orgId).where('retired_at', 'is not', null).where('retired_at', '<=', before).execute()
}
