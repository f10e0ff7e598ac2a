import type { Dialect } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'
import { streamBatchSamples, type LinkSample } from '../../historian/link.ts'
import type { Row } from '../../tenant-transfer/introspect.ts'
import type { LinkHttp } from '../agent/http.ts'
import { DEFAULT_CHUNK_SAMPLES, MAX_CHUNK_SAMPLES, type BatchChunks } from './schemas.ts'
import { sha256Hex } from './wire.ts'

export type { LinkHttp }

export interface UploadProgress {
  /** Chunks and samples sent by this call, and the bytes of their bodies. */
  chunks: number
  samples: number
  bytes: number
  /** Chunks the cloud already held, not sent again. */
  skippedChunks: number
  /** Whether the upload started again from chunk 0: a chunk the cloud held differed (the batch's samples changed). */
  restarted: boolean
}

/** The cloud refused a request of the upload (a problem answer): the upload stops; nothing of that chunk was stored. */
export class ChunkUploadRefused extends Error {
  readonly status: number
  readonly code: string | undefined
  constructor(status: number, code: string | undefined, detail: string) {
    super(`historian chunk upload refused: ${status} ${code ?? ''} ${detail}`.trim())
    this.name = 'ChunkUploadRefused'
    this.status = status
    this.code = code
  }
}

const pathOf = (batchId: string) => `/api/link/historian/${encodeURIComponent(batchId)}/chunks`

async function refusal(res: Response): Promise<ChunkUploadRefused> {
  let code: string | undefined
  let detail = ''
  try {
    const problem = (await res.json()) as { code?: unknown; detail?: unknown }
    code = typeof problem.code === 'string' ? problem.code : undefined
    detail = typeof problem.detail === 'string' ? problem.detail : ''
  } catch {
    // A body that is not a problem (a proxy's page): the status says enough.
  }
  return new ChunkUploadRefused(res.status, code, detail)
}

/** A chunk's rows as the wire's samples; rows of another site than the batch's are a programming error. */
function samplesOf(rows: readonly Row[], batch: { id: string; siteCode: string }): LinkSample[] {
  if (rows[0]!.site_code !== batch.siteCode) throw new TypeError(`batch ${batch.id} belongs to site ${String(rows[0]!.site_code)}, not ${batch.siteCode}`)
  return rows.map(
    (r): LinkSample => [String(r.instance_id), String(r.tag_key), Number(r.ts), r.value as number | null, r.text as string | null, Number(r.quality)],
  )
}

/**
 * Whether every chunk the cloud holds is this site's chunk of that number, cut at `size`: the same digest, so the
 * samples at those positions are still the ones sent. They move when the batch's sample set changes (a forced import
 * of another batch took some over): then a resume would skip samples, and the cloud would keep ones the site moved.
 * Reads the site's chunks up to the last one held (one chunk in memory at a time) and sends nothing.
 */
async function heldChunksMatch(
  db: Db,
  dialect: Dialect,
  orgId: string,
  batch: { id: string; siteCode: string },
  size: number,
  held: ReadonlyMap<number, string | null>,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  let last = 0
  for (const n of held.keys()) last = Math.max(last, n)
  let matched = 0
  for await (const { chunk, rows } of streamBatchSamples(db, dialect, orgId, batch.id, { chunkSize: size })) {
    signal?.throwIfAborted()
    const digest = held.get(chunk)
    if (digest !== undefined) {
      if (digest !== sha256Hex(JSON.stringify(samplesOf(rows, batch)))) return false
      matched++
    }
    if (chunk >= last) break
  }
  return matched === held.size // a chunk held past the site's last one: the batch has fewer samples now
}

/**
 * Moves a finished batch's samples to the cloud before its row is pushed: asks which chunks arrived and their
 * digests, checks that each is still this site's chunk of that number, then sends the others in order, each with the
 * SHA-256 of its samples. When a chunk the cloud holds differs (the batch's samples changed on the site since it was
 * sent), the upload starts again: the cloud forgets the batch's chunks (DELETE; the samples of a batch it shows stay
 * until each chunk and the batch row replace them) and every chunk is sent, so the cloud ends with exactly the samples
 * the site attributes to the batch. A cut (a failed request, an aborted
 * `signal`) throws; the next call resumes at the first chunk the cloud lacks and never sends again one it holds
 * unchanged (and the cloud stores a resent chunk once anyway). Chunks are read from the database as they are checked
 * and sent: memory is one chunk, whatever the batch. `onProgress` hears after each chunk; the totals are returned.
 * Throws ChunkUploadRefused on a refusal.
 */
export async function uploadBatchSamples(
  http: LinkHttp,
  db: Db,
  dialect: Dialect,
  orgId: string,
  batch: { id: string; siteCode: string },
  o: { chunkSize?: number; signal?: AbortSignal; onProgress?: (progress: Readonly<UploadProgress>) => void } = {},
): Promise<UploadProgress> {
  const chunkSize = o.chunkSize ?? DEFAULT_CHUNK_SAMPLES
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 1 || chunkSize > MAX_CHUNK_SAMPLES) throw new TypeError(`chunkSize must be 1 to ${MAX_CHUNK_SAMPLES}`)
  const { signal } = o
  const progress: UploadProgress = { chunks: 0, samples: 0, bytes: 0, skippedChunks: 0, restarted: false }
  const listed = await http.request(pathOf(batch.id), { method: 'GET', ...(signal ? { signal } : {}) })
  if (!listed.ok) throw await refusal(listed)
  const held = (await listed.json()) as BatchChunks
  // Chunk n means samples n·size onwards: a resumed upload keeps the size the cloud's chunks were cut with, which
  // chunk 0 tells (full, or the whole batch when it is the only chunk; chunks go in order, so it is there first).
  // Chunks held without chunk 0 cannot be trusted to mean any size: the upload starts again, as on a changed chunk.
  let size = held.chunkSize ?? chunkSize
  const received = new Map(held.chunks.map((n, i) => [n, held.digests[i] ?? null]))
  if (received.size > 0 && (held.chunkSize === null || !(await heldChunksMatch(db, dialect, orgId, batch, size, received, signal)))) {
    const restarted = await http.request(`${pathOf(batch.id)}?site=${encodeURIComponent(batch.siteCode)}`, {
      method: 'DELETE',
      ...(signal ? { signal } : {}),
    })
    if (!restarted.ok) throw await refusal(restarted)
    await restarted.arrayBuffer() // drain: the connection goes back to the pool
    received.clear()
    size = chunkSize
    progress.restarted = true
  }
  let fromChunk = 0
  while (received.has(fromChunk)) fromChunk++
  progress.skippedChunks = fromChunk

  for await (const { chunk, rows } of streamBatchSamples(db, dialect, orgId, batch.id, { fromChunk, chunkSize: size })) {
    signal?.throwIfAborted()
    if (received.has(chunk)) {
      progress.skippedChunks++
      continue
    }
    const samples = samplesOf(rows, batch)
    const samplesJson = JSON.stringify(samples)
    const sha256 = sha256Hex(samplesJson) // the canonical samples: chunkDigest (wire.ts)
    const body = `{"site":${JSON.stringify(batch.siteCode)},"samples":${samplesJson},"sha256":"${sha256}"}`
    const res = await http.request(`${pathOf(batch.id)}/${chunk}`, {
      method: 'PUT',
      body,
      headers: { 'content-type': 'application/json' },
      ...(signal ? { signal } : {}),
    })
    if (!res.ok) throw await refusal(res)
    await res.arrayBuffer() // drain: the connection goes back to the pool
    progress.chunks++
    progress.samples += samples.length
    progress.bytes += Buffer.byteLength(body)
    o.onProgress?.({ ...progress })
  }
  return progress
}
