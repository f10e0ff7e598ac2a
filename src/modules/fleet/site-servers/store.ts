import type { Db, SiteServersTable } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'

export function insertSiteServer(db: Db, row: SiteServersTable) {
  return db.insertInto('site_servers').values(row).execute()
}

export function findSiteServer(db: Db, orgId: OrgId, id: string) {
  return db.selectFrom('site_servers').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}

/** Keyset page in id order (ids are time-ordered: oldest registration first). */
export function listSiteServersPage(db: Db, orgId: OrgId, options: { limit: number; afterId?: string }) {
  let query = db.selectFrom('site_servers').selectAll().where('org_id', '=', orgId)
  if (options.afterId !== undefined) query = query.where('id', '>', options.afterId)
  return query.orderBy('id').limit(options.limit).execute()
}

/** The servers that hold their sites: not revoked. */
export function listLiveSiteServers(db: Db, orgId: OrgId) {
  return db.selectFrom('site_servers').select(['id', 'name', 'sites']).where('org_id', '=', orgId).where('revoked_at', 'is', null).execute()
}

/** The server a pending enrolment code (its SHA-256) belongs to, whatever its expiry; the caller checks that. */
export function findSiteServerByCodeHash(db: Db, orgId: OrgId, codeHash: string) {
  return db.selectFrom('site_servers').selectAll().where('org_id', '=', orgId).where('code_hash', '=', codeHash).executeTakeFirst()
}

/**
 * Uses the code up and stores the credential's verifier, in one conditional statement: of any number of concurrent
 * enrolments with one code, exactly one matches the row (PostgreSQL re-checks the WHERE after waiting for the row's
 * lock; SQLite runs one writer at a time), and the others update nothing.
 */
export function consumeEnrolmentCode(
  db: Db,
  orgId: OrgId,
  id: string,
  codeHash: string,
  now: number,
  set: { credentialVerifier: string; peerVersions: string; epoch?: string | undefined },
) {
  return db
    .updateTable('site_servers')
    .set({
      code_hash: null,
      code_expires_at: null,
      credential_verifier: set.credentialVerifier,
      enrolled_at: now,
      revoked_at: null,
      revoked_by: null,
      last_contact_at: now,
      last_error: null,
      peer_versions: set.peerVersions,
      // The site server's outbox epoch; a site that sends none (an older one) keeps what was stored.
      ...(set.epoch === undefined ? {} : { epoch: set.epoch }),
    })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('code_hash', '=', codeHash)
    .where('code_expires_at', '>', now)
    .executeTakeFirst()
}

/** Sets revoked_at once (a revoked server matches no row); a pending code dies with it. */
export function revokeSiteServer(db: Db, orgId: OrgId, id: string, at: number, by: string) {
  return db
    .updateTable('site_servers')
    .set({ revoked_at: at, revoked_by: by, code_hash: null, code_expires_at: null })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
}

/** A new one-time code for an enrolled (or registered) server: it keeps its credential until it re-enrols. */
export function replaceEnrolmentCode(db: Db, orgId: OrgId, id: string, codeHash: string, expiresAt: number) {
  return db
    .updateTable('site_servers')
    .set({ code_hash: codeHash, code_expires_at: expiresAt })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
}

/**
 * A new one-time code for a revoked server: it comes back as registered, and its old credential's verifier is
 * dropped, so that credential stays dead whatever happens next.
 */
export function reopenRevokedSiteServer(db: Db, orgId: OrgId, id: string, codeHash: string, expiresAt: number) {
  return db
    .updateTable('site_servers')
    .set({ code_hash: codeHash, code_expires_at: expiresAt, revoked_at: null, revoked_by: null, credential_verifier: null })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('revoked_at', 'is not', null)
    .executeTakeFirst()
}

/**
 * Authentication: the Host header named the organisation; the verifier (a keyed hash of a credential with ~190 random
 * bits) is the lookup within it (unique per organisation, migration 2300).
 */
export function findActiveSiteServerByVerifier(db: Db, orgId: OrgId, verifier: string) {
  return db
    .selectFrom('site_servers')
    .select(['org_id', 'id', 'sites', 'credential_verifier'])
    .where('org_id', '=', orgId)
    .where('credential_verifier', '=', verifier)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
}

/**
 * A reseed: the server's new epoch, and its mark (link_marks, peer = the server id) replaced by the new epoch's,
 * starting at `after` with no digest. Answers 0 when the server is not live (revoked meanwhile).
 */
export async function reseedSiteServer(db: Db, orgId: OrgId, id: string, epoch: string, after: { tx: number; seq: number }, now: number): Promise<number> {
  const result = await db
    .updateTable('site_servers')
    .set({ epoch, last_contact_at: now, last_error: null })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  if (Number(result.numUpdatedRows) === 0) return 0
  await db
    .insertInto('link_marks')
    .values({ org_id: orgId, peer: id, epoch, tx: after.tx, seq: after.seq, digest: null, updated_at: now })
    .onConflict((oc) => oc.columns(['org_id', 'peer']).doUpdateSet({ epoch, tx: after.tx, seq: after.seq, digest: null, updated_at: now }))
    .execute()
  return 1
}
