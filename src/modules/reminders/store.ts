import type { Db } from '../../db/schema.ts'

const COOLDOWN_MS = 7 * 86_400_000

/**
 * Keys due a reminder: not revoked, expiring in [from, to], not reminded (sent or skipped) within the cooldown,
 * and with no reminder row for this expiry that is settled or claimed by a live process. The job is the control
 * plane's, so this is the one query that spans organisations.
 */
export function findDueKeys(db: Db, window: { from: number; to: number; now: number; leaseMs: number }) {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('orgs as o', 'o.id', 'k.org_id')
    .select([
      'k.org_id',
      'k.id',
      'k.name',
      'k.prefix',
      'k.role',
      'k.expires_at',
      'k.created_by_kind',
      'k.created_by_user_id',
      'k.created_by_account',
      'o.name as org_name',
      'o.slug as org_slug',
    ])
    .where('k.revoked_at', 'is', null)
    .where('k.expires_at', '>=', window.from)
    .where('k.expires_at', '<=', window.to)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('key_reminders as r')
            .select('r.key_id')
            .whereRef('r.org_id', '=', 'k.org_id')
            .whereRef('r.key_id', '=', 'k.id')
            .where((eb) =>
              eb.or([
                eb.and([eb('r.status', 'in', ['sent', 'skipped']), eb('r.claimed_at', '>', window.now - COOLDOWN_MS)]),
                eb.and([eb('r.status', 'in', ['sent', 'skipped']), eb('r.expires_at', '=', eb.ref('k.expires_at'))]),
                eb.and([eb('r.status', '=', 'claimed'), eb('r.claimed_at', '>', window.now - window.leaseMs)]),
              ]),
            ),
        ),
      ),
    )
    .orderBy('k.expires_at')
    .execute()
}

/** Claims a reminder that has no row yet; false when another process got there first. */
export async function claimNew(db: Db, row: { orgId: string; keyId: string; expiresAt: number; by: string; at: number }): Promise<boolean> {
  const result = await db
    .insertInto('key_reminders')
    .values({
      org_id: row.orgId,
      key_id: row.keyId,
      expires_at: row.expiresAt,
      status: 'claimed',
      recipient: null,
      attempts: 0,
      claimed_by: row.by,
      claimed_at: row.at,
      sent_at: null,
      last_error: null,
    })
    .onConflict((oc) => oc.columns(['org_id', 'key_id', 'expires_at']).doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1
}

/** Re-claims a failed reminder, or one whose claimer died (lease over); false when another process got it. */
export async function claimRetry(db: Db, row: { orgId: string; keyId: string; expiresAt: number; by: string; at: number; leaseMs: number }): Promise<boolean> {
  const result = await db
    .updateTable('key_reminders')
    .set({ status: 'claimed', claimed_by: row.by, claimed_at: row.at })
    .where('org_id', '=', row.orgId)
    .where('key_id', '=', row.keyId)
    .where('expires_at', '=', row.expiresAt)
    .where((eb) => eb.or([eb('status', '=', 'failed'), eb.and([eb('status', '=', 'claimed'), eb('claimed_at', '<=', row.at - row.leaseMs)])]))
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export function settleReminder(
  db: Db,
  key: { orgId: string; keyId: string; expiresAt: number; by: string },
  outcome: { status: 'sent' | 'skipped' | 'failed'; recipient: string | null; at: number; error: string | null },
) {
  return db
    .updateTable('key_reminders')
    .set((eb) => ({
      status: outcome.status,
      recipient: outcome.recipient,
      last_error: outcome.error,
      attempts: eb('attempts', '+', 1),
      sent_at: outcome.status === 'sent' ? outcome.at : null,
      // The cooldown counts from the moment a reminder was settled.
      claimed_at: outcome.at,
    }))
    .where('org_id', '=', key.orgId)
    .where('key_id', '=', key.keyId)
    .where('expires_at', '=', key.expiresAt)
    .where('claimed_by', '=', key.by)
    .execute()
}

/** Any key of the organisation, revoked or not: the creator chain follows keys that are gone. */
export function findKeyCreator(db: Db, orgId: string, keyId: string) {
  return db
    .selectFrom('api_keys')
    .select(['created_by_kind', 'created_by_user_id', 'created_by_account'])
    .where('org_id', '=', orgId)
    .where('id', '=', keyId)
    .executeTakeFirst()
}
