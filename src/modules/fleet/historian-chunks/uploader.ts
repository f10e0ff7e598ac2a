import type { Dialect } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'
import { streamBatchSamples, type LinkSample } from '../../historian/link.ts'
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

/**
 * Moves a finished batch's samples to the cloud before its row is pushed: asks which chunks arrived, then sends the
 * others in order, each with the SHA-256 of its samples. A cut (a failed request, an aborted `signal`) throws; the next
 * call resumes at the first chunk the cloud lacks and never sends again one it holds (and the cloud stores a resent
 * chunk once anyway). Chunks are read from the database as they are sent: memory is one chunk, whatever the batch.
 * `onProgress` hears after each chunk; the totals are returned. Throws ChunkUploadRefused on a refusal.
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
  const progress: UploadProgress = { chunks: 0, samples: 0, bytes: 0, skippedChunks: 0 }
  const listed = await http.request(pathOf(batch.id), { method: 'GET', ...(signal ? { signal } : {}) })
  if (!listed.ok) throw await refusal(listed)
  const held = (await listed.json()) as BatchChunks
  // Chunk n means samples n·size onwards: a resumed upload keeps the size the cloud's chunks were cut with, which
  // chunk 0 tells (full, or the whole batch when it is the only chunk; chunks go in order, so it is there first).
  // Without chunk 0 the numbers held cannot be trusted to mean this size: nothing is skipped (a chunk held with the
  // same samples answers the same; one with others is refused, 409).
  const size = held.chunkSize ?? chunkSize
  const received = new Set(held.chunkSize === null ? [] : held.chunks)
  let fromChunk = 0
  while (received.has(fromChunk)) fromChunk++
  progress.skippedChunks = fromChunk

  for await (const { chunk, rows } of streamBatchSamples(db, dialect, orgId, batch.id, { fromChunk, chunkSize: size })) {
    signal?.throwIfAborted()
    if (received.has(chunk)) {
      progress.skippedChunks++
      continue
    }
    if (rows[0]!.site_code !== batch.siteCode) throw new TypeError(`batch ${batch.id} belongs to site ${String(rows[0]!.site_code)}, not ${batch.siteCode}`)
    const samples = rows.map(
      (r): LinkSample => [String(r.instance_id), String(r.tag_key), Number(r.ts), r.value as number | null, r.text as string | null, Number(r.quality)],
    )
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
