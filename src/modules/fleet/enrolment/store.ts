import { sql } from 'kysely'
import type { Db, LinkPeerTable } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'

/** The cloud as a peer (`link_marks.peer` on a site server). */
export const CLOUD_PEER = 'cloud'

export function findLinkPeer(db: Db, orgId: OrgId) {
  return db.selectFrom('link_peer').selectAll().where('org_id', '=', orgId).executeTakeFirst()
}

/** Stores this server's enrolment; a re-enrolment replaces the credential and keeps what the link counted (the acknowledged mark). */
export function saveLinkPeer(db: Db, row: LinkPeerTable) {
  return db
    .insertInto('link_peer')
    .values(row)
    .onConflict((oc) =>
      oc.column('org_id').doUpdateSet({
        server_id: row.server_id,
        cloud_url: row.cloud_url,
        sealed_credential: row.sealed_credential,
        epoch: row.epoch,
        sites: row.sites,
        enrolled_at: row.enrolled_at,
        last_contact_at: row.last_contact_at,
        last_error: null,
        peer_versions: row.peer_versions,
      }),
    )
    .execute()
}

export function findMark(db: Db, orgId: OrgId, peer: string) {
  return db.selectFrom('link_marks').selectAll().where('org_id', '=', orgId).where('peer', '=', peer).executeTakeFirst()
}

/**
 * The first mark of a peer in an epoch; an existing one of the same epoch is left alone (the pull moves it, not the
 * seeding). One of another epoch (a pull of the enrolment's previous epoch that ended during a reseed) is replaced.
 */
export function insertMark(db: Db, orgId: OrgId, mark: { peer: string; epoch: string; tx: number; seq: number; at: number }) {
  return db
    .insertInto('link_marks')
    .values({ org_id: orgId, peer: mark.peer, epoch: mark.epoch, tx: mark.tx, seq: mark.seq, digest: null, updated_at: mark.at })
    .onConflict((oc) =>
      oc
        .columns(['org_id', 'peer'])
        .doUpdateSet({ epoch: mark.epoch, tx: mark.tx, seq: mark.seq, digest: null, updated_at: mark.at })
        .where('link_marks.epoch', '<>', mark.epoch),
    )
    .execute()
}

/** The primary-key values (after org_id) of a site's rows of one table. */
export async function siteRowKeys(db: Db, orgId: OrgId, table: string, siteColumn: string, key: readonly string[], site: string): Promise<unknown[][]> {
  const columns = key.map((c) => sql.ref(c))
  const { rows } = await sql<
    Record<string, unknown>
  >`select ${sql.join(columns)} from ${sql.table(table)} where org_id = ${orgId} and ${sql.ref(siteColumn)} = ${site}`.execute(db)
  return rows.map((r) => key.map((c) => r[c]))
}

/** The version each seeded row was taken at (link_base); an existing base (a change pulled meanwhile) is kept. */
export async function insertBases(db: Db, orgId: OrgId, table: string, rowKeys: readonly string[], version: number): Promise<void> {
  for (let i = 0; i < rowKeys.length; i += 500) {
    const values = rowKeys.slice(i, i + 500).map((row_key) => ({ org_id: orgId, table_name: table, row_key, version }))
    await db
      .insertInto('link_base')
      .values(values)
      .onConflict((oc) => oc.columns(['org_id', 'table_name', 'row_key']).doNothing())
      .execute()
  }
}

/** Removes outbox rows by seq (the changes a reseed kept in its file instead). */
export async function deleteOutboxRows(db: Db, orgId: OrgId, seqs: readonly number[]): Promise<void> {
  for (let i = 0; i < seqs.length; i += 500) {
    await db
      .deleteFrom('link_outbox')
      .where('org_id', '=', orgId)
      .where('seq', 'in', seqs.slice(i, i + 500))
      .execute()
  }
}

/**
 * A reseed's local part (inside its transaction, the link's origin set): the linked sites' rows go (deleting a site
 * cascades to everything it owns, the historian's series and, by their trigger, points included), their forwarded
 * commands (the cloud records its pending ones again for the seed), every row version (link_base) and the pull's mark.
 */
export async function dropLinkedSites(db: Db, orgId: OrgId, sites: readonly string[]): Promise<void> {
  if (sites.length > 0) {
    await db.deleteFrom('link_commands').where('org_id', '=', orgId).where('site_code', 'in', sites).execute()
    await db.deleteFrom('sites').where('org_id', '=', orgId).where('code', 'in', sites).execute()
  }
  await db.deleteFrom('link_base').where('org_id', '=', orgId).execute()
  await db.deleteFrom('link_marks').where('org_id', '=', orgId).where('peer', '=', CLOUD_PEER).execute()
}

/** The enrolment's new epoch, where its push continues from (the cloud's new mark), and what to show until seeded. */
export function restartLinkPeer(db: Db, orgId: OrgId, set: { epoch: string; acked: { tx: number; seq: number }; note: string }) {
  return db
    .updateTable('link_peer')
    .set({ epoch: set.epoch, acked_tx: set.acked.tx, acked_seq: set.acked.seq, last_error: set.note })
    .where('org_id', '=', orgId)
    .execute()
}
