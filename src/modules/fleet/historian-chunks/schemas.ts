import { Type, type Static } from 'typebox'
import { MAX_TIME } from '../../../clock.ts'
import { INSTANCE_LIMITS } from '../../instances/limits.ts'
import { SAMPLE_VALUE_LIMIT } from '../../historian/sample-value.ts'

/** The most samples a chunk may carry; the uploader's default (2 000) keeps a chunk's body well under the body limit. */
export const MAX_CHUNK_SAMPLES = 5000
export const DEFAULT_CHUNK_SAMPLES = 2000
/** A sample's tag key: one of its instance's tagMappings keys, as long as those may be. */
export const TAG_KEY_MAX = INSTANCE_LIMITS.tagKeyMaxLength

const BatchId = Type.String({ minLength: 1, maxLength: 100, description: "The site's batch id (`bat_…`)." })
const ChunkNumber = Type.Integer({ minimum: 0, maximum: 10_000_000, description: 'The chunk number, from 0.' })

export const BatchChunksParams = Type.Object({ batchId: BatchId }, { additionalProperties: false })
export const ChunkParams = Type.Object({ batchId: BatchId, n: ChunkNumber }, { additionalProperties: false })

const SiteCode = Type.String({ pattern: '^[A-Za-z0-9_-]{1,50}$', description: "The batch's site: one of the site server's sites." })

export const RestartQuery = Type.Object({ site: SiteCode }, { additionalProperties: false })

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(s: T) => Type.Union([s, Type.Null()])

export const LinkSampleSchema = Type.Tuple(
  [
    Type.String({ minLength: 1, maxLength: 100, description: 'instanceId' }),
    Type.String({ minLength: 1, maxLength: TAG_KEY_MAX, description: 'tagKey' }),
    Type.Integer({ minimum: -MAX_TIME, maximum: MAX_TIME, description: 'ts, epoch ms (an instant a date holds)' }),
    Nullable(Type.Number({ minimum: -SAMPLE_VALUE_LIMIT, maximum: SAMPLE_VALUE_LIMIT, description: 'value' })),
    Nullable(Type.String({ description: 'text' })),
    Type.Integer({ minimum: -32_768, maximum: 32_767, description: 'quality (OPC: 192 good, 64 uncertain, 0 bad)' }),
  ],
  { description: '[instanceId, tagKey, ts, value, text, quality]' },
)

export const PutChunkBody = Type.Object(
  {
    site: SiteCode,
    samples: Type.Array(LinkSampleSchema, {
      minItems: 1,
      maxItems: MAX_CHUNK_SAMPLES,
      description: `1 to ${MAX_CHUNK_SAMPLES} samples, ascending by instanceId, then tagKey (byte order), then ts; no two at the same key.`,
    }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Lower-case hex SHA-256 of `JSON.stringify(samples)`.' }),
  },
  { additionalProperties: false },
)
export type PutChunkInput = Static<typeof PutChunkBody>

export const ChunkReceiptSchema = Type.Object(
  {
    batchId: Type.String(),
    chunk: Type.Integer(),
    samples: Type.Integer({ description: 'Samples the chunk holds (as first stored; a resent chunk answers the same).' }),
  },
  { $id: 'LinkChunkReceipt', additionalProperties: false },
)
export type ChunkReceipt = Static<typeof ChunkReceiptSchema>

export const BatchChunksSchema = Type.Object(
  {
    batchId: Type.String(),
    chunks: Type.Array(Type.Integer(), { description: 'The chunk numbers received, ascending.' }),
    digests: Type.Array(Type.Union([Type.String(), Type.Null()]), {
      description:
        "Each listed chunk's `sha256` as it was stored, in the order of `chunks` (null for a chunk stored before digests " +
        'were kept): an uploader skips a chunk only when its own chunk at that number has the same digest.',
    }),
    samples: Type.Integer({ description: 'Samples received over those chunks.' }),
    chunkSize: Type.Union([Type.Integer(), Type.Null()], {
      description:
        "The samples of chunk 0, null before it arrived: the upload's chunk size (chunk n holds samples n·chunkSize onwards), " +
        'which a resumed upload keeps whatever it is configured with.',
    }),
  },
  { $id: 'LinkBatchChunks', additionalProperties: false },
)
export type BatchChunks = Static<typeof BatchChunksSchema>
