import type { Insertable } from 'kysely'
import type { ApiKeysTable, Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'
import { reusableQuery } from '../../db/reusable-query.ts'

export function insertApiKey(db: Db, row: Insertable<ApiKeysTable>) {
  return db.insertInto('api_keys').values(row).execute()
}

const PUBLIC_COLUMNS = ['id', 'prefix', 'role', 'name', 'created_by_user_id', 'created_at', 'expires_at', 'last_used_at', 'site_code', 'networks'] as const

// Read on every list call (the issue 3 bench's path): compiled once per database (db/reusable-query.ts).
const listActive = reusableQuery((db: Db, orgId: string) =>
  db
    .selectFrom('api_keys')
    .select(PUBLIC_COLUMNS)
    .where('org_id', '=', orgId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc'),
)

export function listActiveApiKeys(db: Db, orgId: OrgId) {
  return listActive(db, orgId)
}

export function findActiveApiKey(db: Db, orgId: OrgId, keyId: string) {
  return db
    .selectFrom('api_keys')
    .select([...PUBLIC_COLUMNS, 'created_by_kind'])
    .where('org_id', '=', orgId)
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
}

/** Revokes the organisation's active keys restricted to a site (its deletion); answers their ids. */
export async function revokeKeysOfSite(db: Db, orgId: OrgId, siteCode: string, at: number, by: string, reason: string): Promise<string[]> {
  const rows = await db
    .updateTable('api_keys')
    .set({ revoked_at: at, revoked_by: by, revoke_reason: reason })
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('revoked_at', 'is', null)
    .returning('id')
    .execute()
  return rows.map((r) => r.id)
}

export async function countActiveKeysOfSite(db: Db, orgId: OrgId, siteCode: string): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Sets revoked_at once: a key already revoked matches no row, so the timestamp never advances. */
export function revokeApiKey(db: Db, orgId: OrgId, keyId: string, at: number, by: string, reason: string | null) {
  return db
    .updateTable('api_keys')
    .set({ revoked_at: at, revoked_by: by, revoke_reason: reason })
    .where('org_id', '=', orgId)
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
}

/**
 * Authentication: the Host header named the organisation before the key is checked; the verifier (a keyed hash of
 * ~190 random bits) is the lookup within it (unique per organisation, migration 2200; one shard on Citus). A key of
 * another organisation is not found: the same uniform 401 as an unknown key.
 */
// Read on every request with an unknown key (and a cache miss): compiled once per database.
const activeByVerifier = reusableQuery((db: Db, orgId: string, verifier: string) =>
  db
    .selectFrom('api_keys')
    .select(['org_id', 'id', 'verifier', 'role', 'expires_at', 'site_code', 'networks'])
    .where('org_id', '=', orgId)
    .where('verifier', '=', verifier)
    .where('revoked_at', 'is', null),
)

export async function findActiveKeyByVerifier(db: Db, orgId: OrgId, verifier: string) {
  const [row] = await activeByVerifier(db, orgId, verifier)
  return row
}

export async function markKeysUsed(db: Db, uses: ReadonlyArray<{ orgId: string; keyId: string; at: number }>) {
  for (const use of uses) {
    await db
      .updateTable('api_keys')
      .set({ last_used_at: use.at })
      .where('org_id', '=', use.orgId)
      .where('id', '=', use.keyId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', use.at)]))
      .execute()
  }
}
