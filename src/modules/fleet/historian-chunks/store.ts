import { sql } from 'kysely'
import { inMultiRowStatements } from '../../../db/multi-row.ts'
import type { Db } from '../../../db/schema.ts'
import type { HeldSpan, LinkKey } from '../../historian/link.ts'

// link_chunks (cloud, migration 2300): which chunks of a site server's historian batch arrived; link_chunk_spans
// (migration 2520): where a replacing upload's batch may hold samples here.

export async function findChunk(
  db: Db,
  orgId: string,
  serverId: string,
  batchId: string,
  chunk: number,
): Promise<{ samples: number; sha256: string | null } | undefined> {
  const row = await db
    .selectFrom('link_chunks')
    .select(['samples', 'sha256'])
    .where('org_id', '=', orgId)
    .where('server_id', '=', serverId)
    .where('batch_id', '=', batchId)
    .where('chunk', '=', chunk)
    .executeTakeFirst()
  return row === undefined ? undefined : { samples: Number(row.samples), sha256: row.sha256 }
}

/** Inserts the chunk's row unless it is there; true when this call inserted it (a concurrent twin waits, then skips). */
export async function insertChunk(
  db: Db,
  orgId: string,
  row: { serverId: string; batchId: string; chunk: number; samples: number; sha256: string; lastKey: LinkKey | null; receivedAt: number },
): Promise<boolean> {
  const result = await db
    .insertInto('link_chunks')
    .values({
      org_id: orgId,
      server_id: row.serverId,
      batch_id: row.batchId,
      chunk: row.chunk,
      samples: row.samples,
      sha256: row.sha256,
      last_key: row.lastKey === null ? null : JSON.stringify(row.lastKey),
      received_at: row.receivedAt,
    })
    .onConflict((oc) => oc.columns(['org_id', 'server_id', 'batch_id', 'chunk']).doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0
}

/** The chunk numbers of a server's batch that arrived, ascending, with their sample counts and digests. */
export async function listChunks(
  db: Db,
  orgId: string,
  serverId: string,
  batchId: string,
): Promise<Array<{ chunk: number; samples: number; sha256: string | null }>> {
  const rows = await db
    .selectFrom('link_chunks')
    .select(['chunk', 'samples', 'sha256'])
    .where('org_id', '=', orgId)
    .where('server_id', '=', serverId)
    .where('batch_id', '=', batchId)
    .orderBy('chunk')
    .execute()
  return rows.map((r) => ({ chunk: Number(r.chunk), samples: Number(r.samples), sha256: r.sha256 }))
}

/** Forgets which chunks of a server's batch arrived (a restarted upload numbers them from 0 again); how many rows went. */
export async function deleteChunks(db: Db, orgId: string, serverId: string, batchId: string): Promise<number> {
  const result = await db
    .deleteFrom('link_chunks')
    .where('org_id', '=', orgId)
    .where('server_id', '=', serverId)
    .where('batch_id', '=', batchId)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Whether this server sent any chunk of the batch (its primary key's prefix). */
export async function hasAnyChunk(db: Db, orgId: string, serverId: string, batchId: string): Promise<boolean> {
  const row = await db
    .selectFrom('link_chunks')
    .select('chunk')
    .where('org_id', '=', orgId)
    .where('server_id', '=', serverId)
    .where('batch_id', '=', batchId)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

/**
 * Whether another site server sent chunks of a batch with this id (a batch belongs to the server that made it).
 * No index leads with batch_id: this reads the organisation's link_chunks rows, so it runs once a batch and server.
 */
export async function isBatchOfAnotherServer(db: Db, orgId: string, serverId: string, batchId: string): Promise<boolean> {
  const row = await db
    .selectFrom('link_chunks')
    .select('server_id')
    .where('org_id', '=', orgId)
    .where('batch_id', '=', batchId)
    .where('server_id', '<>', serverId)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

/**
 * The last sample's key of the server's highest chunk of the batch below `below` (every chunk when undefined): where a
 * replacing chunk's removal starts, or where the finished upload ends. Null when there is none (or it predates
 * migration 2520: the removal then starts at the batch's first sample).
 */
export async function lastKeyBelow(db: Db, orgId: string, serverId: string, batchId: string, below?: number): Promise<LinkKey | null> {
  let query = db.selectFrom('link_chunks').select('last_key').where('org_id', '=', orgId).where('server_id', '=', serverId).where('batch_id', '=', batchId)
  if (below !== undefined) query = query.where('chunk', '<', below)
  const row = await query.orderBy('chunk', 'desc').limit(1).executeTakeFirst()
  return row?.last_key ? (JSON.parse(row.last_key) as LinkKey) : null
}

/** The spans of a server's replacing upload of a batch; none when it is not replacing. */
export async function listSpans(db: Db, orgId: string, serverId: string, batchId: string): Promise<HeldSpan[]> {
  const rows = await db
    .selectFrom('link_chunk_spans')
    .select(['series_id', 'instance_id', 'tag_key', 'from_ts', 'to_ts'])
    .where('org_id', '=', orgId)
    .where('server_id', '=', serverId)
    .where('batch_id', '=', batchId)
    .execute()
  return rows.map((r) => ({ seriesId: Number(r.series_id), instanceId: r.instance_id, tagKey: r.tag_key, from: Number(r.from_ts), to: Number(r.to_ts) }))
}

/** Which of these batches a server is replacing (they have spans). */
export async function replacingBatches(db: Db, orgId: string, serverId: string, batchIds: readonly string[]): Promise<string[]> {
  if (batchIds.length === 0) return []
  const rows = await db
    .selectFrom('link_chunk_spans')
    .select('batch_id')
    .distinct()
    .where('org_id', '=', orgId)
    .where('server_id', '=', serverId)
    .where('batch_id', 'in', batchIds)
    .execute()
  return rows.map((r) => r.batch_id)
}

/** Records spans of a replacing upload, widening those of a series it has. */
export async function addSpans(db: Db, orgId: string, serverId: string, batchId: string, spans: readonly HeldSpan[]): Promise<void> {
  const rows = spans.map((s) => ({
    org_id: orgId,
    server_id: serverId,
    batch_id: batchId,
    series_id: s.seriesId,
    instance_id: s.instanceId,
    tag_key: s.tagKey,
    from_ts: s.from,
    to_ts: s.to,
  }))
  await inMultiRowStatements(rows, 8, (values) =>
    db
      .insertInto('link_chunk_spans')
      .values(values)
      // case, not min()/max(): SQLite's two-argument min is PostgreSQL's least.
      .onConflict((oc) =>
        oc.columns(['org_id', 'server_id', 'batch_id', 'series_id']).doUpdateSet((eb) => {
          const [was, add] = [eb.ref('link_chunk_spans.from_ts'), eb.ref('excluded.from_ts')]
          const [wasTo, addTo] = [eb.ref('link_chunk_spans.to_ts'), eb.ref('excluded.to_ts')]
          return {
            from_ts: sql<number>`case when ${add} < ${was} then ${add} else ${was} end`,
            to_ts: sql<number>`case when ${addTo} > ${wasTo} then ${addTo} else ${wasTo} end`,
          }
        }),
      )
      .execute(),
  )
}

/** Ends a server's replacing upload of a batch (or forgets it with the batch). */
export async function deleteSpans(db: Db, orgId: string, serverId: string, batchId: string): Promise<void> {
  await db.deleteFrom('link_chunk_spans').where('org_id', '=', orgId).where('server_id', '=', serverId).where('batch_id', '=', batchId).execute()
}
