import type { Db, IdempotencyKeysTable } from '../db/schema.ts'

export type IdempotencyRow = IdempotencyKeysTable

export interface ClaimRow {
  key: string
  requestMethod: string
  requestPath: string
  fingerprint: string
  caller: string
  now: number
}

export function findIdempotencyKey(db: Db, orgId: string, key: string): Promise<IdempotencyRow | undefined> {
  return db.selectFrom('idempotency_keys').selectAll().where('org_id', '=', orgId).where('key', '=', key).executeTakeFirst()
}

/** True when this call inserted the row: the primary key (org_id, key) lets exactly one of N concurrent claims win. */
export async function insertIdempotencyClaim(db: Db, orgId: string, claim: ClaimRow): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values({
      org_id: orgId,
      key: claim.key,
      request_method: claim.requestMethod,
      request_path: claim.requestPath,
      fingerprint: claim.fingerprint,
      caller: claim.caller,
      state: 'running',
      status: null,
      headers: null,
      body: null,
      created_at: claim.now,
      locked_at: claim.now,
      completed_at: null,
    })
    .onConflict((oc) => oc.columns(['org_id', 'key']).doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1
}

/** Takes over a claim whose executor has been silent since `lockedAt` (a crashed process); true for the winner. */
export async function retakeIdempotencyClaim(db: Db, orgId: string, key: string, lockedAt: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ locked_at: now })
    .where('org_id', '=', orgId)
    .where('key', '=', key)
    .where('state', '=', 'running')
    .where('locked_at', '=', lockedAt)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export async function completeIdempotencyKey(
  db: Db,
  orgId: string,
  key: string,
  answer: { status: number; headers: string; body: string; now: number },
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', status: answer.status, headers: answer.headers, body: answer.body, completed_at: answer.now })
    .where('org_id', '=', orgId)
    .where('key', '=', key)
    .where('state', '=', 'running')
    .execute()
}

/** Drops a running claim (a 5xx, 409 or 429, or an answer that cannot be stored), so that a retry executes anew. */
export async function releaseIdempotencyClaim(db: Db, orgId: string, key: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('org_id', '=', orgId).where('key', '=', key).where('state', '=', 'running').execute()
}

/** Deletes the organisation's keys created before `before` (expired). */
export async function deleteExpiredIdempotencyKeys(db: Db, orgId: string, before: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('org_id', '=', orgId).where('created_at', '<=', before).executeTakeFirst()
  return Number(result.numDeletedRows)
}
