import type { Db } from '../../../db/schema.ts'

// link_chunks (cloud, migration 2300): which chunks of a site server's historian batch arrived.

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
  row: { serverId: string; batchId: string; chunk: number; samples: number; sha256: string; receivedAt: number },
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
