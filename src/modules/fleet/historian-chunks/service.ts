import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'
import { NotFound } from '../../../errors/domain-error.ts'
import type { OrgId } from '../../../ids.ts'
import {
  chunkSpans,
  lastKeyOf,
  removeLinkedSamples,
  removeLinkedSamplesBetween,
  shownBatchSpans,
  siteOfBatch,
  storeLinkedSamples,
  type LinkSample,
} from '../../historian/link.ts'
import type { InstancesService } from '../../instances/service.ts'
import { ChunkChecksumMismatch, ChunkDiffers, ChunkSamplesInvalid, ChunkUnknownInstances, SiteNotLinked } from '../errors.ts'
import type { BatchChunks, ChunkReceipt } from './schemas.ts'
import {
  addSpans,
  deleteChunks,
  deleteSpans,
  findChunk,
  hasAnyChunk,
  insertChunk,
  isBatchOfAnotherServer,
  lastKeyBelow,
  listChunks,
  listSpans,
  replacingBatches,
} from './store.ts'
import { chunkDigest, findSampleProblems } from './wire.ts'

/** The site server a link request comes from (the `link` principal): its id and its sites. */
export interface LinkPeer {
  serverId: string
  sites: readonly string[]
}

export interface ChunkInput {
  site: string
  samples: LinkSample[]
  sha256: string
}

/**
 * The cloud's side of a historian batch's samples on the link (issue 26): chunks of a site server's batch stored
 * exactly once each, resumable by chunk number. The batch row comes later through the push; until then the samples
 * are stored but invisible (reads join historian_batches).
 */
export function createHistorianChunksService(deps: { handle: DatabaseHandle; clock: Clock; instances: Pick<InstancesService, 'existingIds'> }) {
  const { handle, clock, instances } = deps
  const { db, dialect } = handle

  /** A batch this server may write: one of its sites, and not a batch the cloud knows under another site or server. */
  async function requireOwnBatch(orgId: OrgId, peer: LinkPeer, batchId: string, site: string): Promise<void> {
    const known = await siteOfBatch(db, orgId, batchId)
    if (known !== undefined && known !== site) throw new NotFound()
    // Once a batch and server: a server that sent a chunk of it passed this check then.
    if (!(await hasAnyChunk(db, orgId, peer.serverId, batchId)) && (await isBatchOfAnotherServer(db, orgId, peer.serverId, batchId))) throw new NotFound()
  }

  async function requireInstances(orgId: OrgId, site: string, samples: readonly LinkSample[]): Promise<void> {
    const ids = [...new Set(samples.map((s) => s[0]))]
    const known = await instances.existingIds(orgId, site, ids)
    if (known.size === ids.length) return
    const unknown = samples.flatMap((s, index) => (known.has(s[0]) ? [] : [{ index, instanceId: s[0] }]))
    throw new ChunkUnknownInstances(unknown.slice(0, 20), unknown.length)
  }

  return {
    /**
     * Stores chunk `chunk` of the server's batch: its samples (upserted by series and time) and its link_chunks row,
     * in one transaction. The same chunk again changes nothing and answers the same. While the upload replaces a batch
     * the cloud shows (restartBatch), the chunk first removes the batch's samples between the previous chunk's last
     * key and its own, in the same transaction: readers see the old samples past it and the new ones up to it. Throws SiteNotLinked (403),
     * ChunkSamplesInvalid (400), ChunkChecksumMismatch (400), NotFound (another site's or server's batch),
     * ChunkUnknownInstances (422), ChunkDiffers (409, the same number with other samples: another count or digest);
     * nothing is stored then.
     */
    async receiveChunk(orgId: OrgId, peer: LinkPeer, batchId: string, chunk: number, input: ChunkInput): Promise<ChunkReceipt> {
      if (!peer.sites.includes(input.site)) throw new SiteNotLinked(input.site)
      const problems = findSampleProblems(input.samples)
      if (problems.length > 0) throw new ChunkSamplesInvalid(problems)
      if (chunkDigest(input.samples) !== input.sha256) throw new ChunkChecksumMismatch()
      const receipt = { batchId, chunk, samples: input.samples.length }
      // A chunk stored before digests were kept (sha256 null) is compared by its count alone.
      const again = (stored: { samples: number; sha256: string | null }) => {
        if (stored.samples !== input.samples.length || (stored.sha256 !== null && stored.sha256 !== input.sha256))
          throw new ChunkDiffers(chunk, stored.samples, input.samples.length)
        return receipt
      }
      const stored = await findChunk(db, orgId, peer.serverId, batchId, chunk)
      if (stored !== undefined) return again(stored)
      await requireOwnBatch(orgId, peer, batchId, input.site)
      await requireInstances(orgId, input.site, input.samples)
      return db.transaction().execute(async (trx) => {
        // The row first: a concurrent twin of this request waits on its key, then finds it and stores nothing.
        const inserted = await insertChunk(trx, orgId, {
          serverId: peer.serverId,
          batchId,
          chunk,
          samples: input.samples.length,
          sha256: input.sha256,
          lastKey: lastKeyOf(input.samples),
          receivedAt: clock.now(),
        })
        if (!inserted) {
          const twin = await findChunk(trx, orgId, peer.serverId, batchId, chunk)
          return again(twin ?? { samples: input.samples.length, sha256: input.sha256 })
        }
        const spans = await listSpans(trx, orgId, peer.serverId, batchId)
        if (spans.length > 0) {
          const after = chunk === 0 ? null : await lastKeyBelow(trx, orgId, peer.serverId, batchId, chunk)
          await removeLinkedSamplesBetween(trx, orgId, batchId, spans, after, lastKeyOf(input.samples))
        }
        await storeLinkedSamples(trx, orgId, input.site, batchId, input.samples)
        if (spans.length > 0) await addSpans(trx, orgId, peer.serverId, batchId, await chunkSpans(trx, orgId, input.site, input.samples))
        return receipt
      })
    },

    /**
     * The chunk numbers of the server's batch received so far and their digests: an uploader resumes at the first
     * missing one once the digests of those it skips match its own chunks.
     */
    async listChunks(orgId: OrgId, peer: LinkPeer, batchId: string): Promise<BatchChunks> {
      const rows = await listChunks(db, orgId, peer.serverId, batchId)
      const first = rows[0]?.chunk === 0 ? rows[0].samples : null
      return {
        batchId,
        chunks: rows.map((r) => r.chunk),
        digests: rows.map((r) => r.sha256),
        samples: rows.reduce((n, r) => n + r.samples, 0),
        chunkSize: first,
      }
    },

    /**
     * Starts the server's upload of a batch again from chunk 0 (its samples changed on the site since the chunks the
     * cloud holds were cut): forgets those chunks, in one transaction, so that what the new upload no longer lists does
     * not stay. A batch the cloud shows (its row arrived, with its coverage) keeps its samples: the upload replaces
     * them chunk by chunk (receiveChunk) and the batch row's next arrival removes what lies past the last chunk
     * (finishReplacedBatches), so readers never see fewer samples than either version has. A batch not shown yet
     * loses its samples here at once. Answers the (empty) listing. Throws SiteNotLinked (403), NotFound (another
     * site's or server's batch); nothing is removed then.
     */
    async restartBatch(orgId: OrgId, peer: LinkPeer, batchId: string, site: string): Promise<BatchChunks> {
      if (!peer.sites.includes(site)) throw new SiteNotLinked(site)
      await requireOwnBatch(orgId, peer, batchId, site)
      await db.transaction().execute(async (trx) => {
        await deleteChunks(trx, orgId, peer.serverId, batchId)
        const shown = await shownBatchSpans(trx, dialect, orgId, site, batchId)
        if (shown === null) {
          await deleteSpans(trx, orgId, peer.serverId, batchId)
          await removeLinkedSamples(trx, orgId, site, batchId)
        } else await addSpans(trx, orgId, peer.serverId, batchId, shown)
      })
      return { batchId, chunks: [], digests: [], samples: 0, chunkSize: null }
    },
  }
}

export type HistorianChunksService = ReturnType<typeof createHistorianChunksService>

/**
 * A batch the site deleted (its tombstone, applied by the push in the push's transaction; ARCHITECTURE.md § Fleet
 * link): the server's chunks of it go, and so do its samples here when this server's site holds the batch. A site
 * records a batch's row before its delete, so a tombstone of an id the cloud does not hold in that site is not that
 * site's batch: another site's batch of that id keeps its samples, and no scan of the site's series is spent on it.
 */
export async function dropDeletedBatch(trx: Db, orgId: string, serverId: string, site: string, batchId: string): Promise<void> {
  await deleteChunks(trx, orgId, serverId, batchId)
  await deleteSpans(trx, orgId, serverId, batchId)
  if ((await siteOfBatch(trx, orgId, batchId)) === site) await removeLinkedSamples(trx, orgId, site, batchId)
}

/**
 * Batch rows of a site arriving by the push (in the push's transaction): a batch this server's upload was replacing is
 * complete now (the uploader sends every chunk before the row), so its samples past the last chunk's last key were
 * the old version's only and go, and the replacement ends.
 */
export async function finishReplacedBatches(trx: Db, orgId: string, serverId: string, batchIds: readonly string[]): Promise<void> {
  for (const batchId of await replacingBatches(trx, orgId, serverId, batchIds)) {
    const spans = await listSpans(trx, orgId, serverId, batchId)
    await removeLinkedSamplesBetween(trx, orgId, batchId, spans, await lastKeyBelow(trx, orgId, serverId, batchId), null)
    await deleteSpans(trx, orgId, serverId, batchId)
  }
}
