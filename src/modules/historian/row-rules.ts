import { Type, type TSchema } from 'typebox'
import { FIRST_ISO_MS, LAST_ISO_MS } from '../../http/input-guard.ts'
import { recordRules, type RuleBreak } from '../../http/validation.ts'
import { RetentionBody } from './live-schemas.ts'
import { TagMarkBody } from './schemas.ts'

// The rules of the historian's settings endpoints, for rows that arrive without a request (a tenant package, the
// fleet link's changes). The pointers name the API's fields.

type Row = Readonly<Record<string, unknown>>

/** The statuses a stored batch has (a dry run stores none); `open` is a gateway's live batch of the current window. */
const BATCH_STATUSES = ['running', 'complete', 'failed', 'open']
const BATCH_COUNTS = [
  ['rows_read', '/rowsRead'],
  ['samples_stored', '/samplesStored'],
  ['rejected_count', '/rejectedCount'],
  ['collision_count', '/collisionCount'],
  ['replaced_count', '/replacedCount'],
  ['bytes_read', '/bytesRead'],
] as const

const retentionRules = recordRules(RetentionBody)
const tagMarkRules = recordRules(TagMarkBody)

/** The first rule of `PUT …/historian/retention` a stored policy row breaks (and a run's count is never negative). */
export function retentionRowBreak(row: Row): RuleBreak | undefined {
  const broken = retentionRules({ retentionDays: row.retention_days })
  if (broken) return broken
  return Number(row.last_deleted) >= 0 ? undefined : { pointer: '/samplesDeleted', message: 'must be >= 0' }
}

/** The first rule of `PUT …/historian/tags/{instanceId}/{tag}` a stored mark row breaks. */
export function tagMarkRowBreak(row: Row): RuleBreak | undefined {
  return tagMarkRules({ interpolation: row.interpolation })
}

// What a batch keeps as JSON text (service/batch-view.ts TagCoverage and BatchReport), as far as its reads use it:
// every time one an answer can write as an RFC 3339 date-time, every number finite, every count a count. Session 25: a
// package's `tags` holding a firstTs of 1.8e308 was stored (the column only had to be JSON) and every read of the
// batch answered 500 (toISOString of an invalid date). A report without its lists reads as empty ones (batch-view.ts readReport).
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])
const StoredTime = Type.Integer({ minimum: FIRST_ISO_MS, maximum: LAST_ISO_MS })
const StoredCount = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })
const FiniteNumber = Type.Number({ minimum: -Number.MAX_VALUE, maximum: Number.MAX_VALUE })
const StoredCoverage = Type.Array(
  Type.Object({
    historianTag: Type.String(),
    instanceId: Type.String(),
    tagKey: Type.String(),
    unit: Nullable(Type.String()),
    scale: FiniteNumber,
    samples: StoredCount,
    firstTs: Nullable(StoredTime),
    lastTs: Nullable(StoredTime),
  }),
)
const StoredCollisionValue = Type.Object({ batchId: Type.String(), value: Nullable(FiniteNumber), text: Nullable(Type.String()), quality: Type.Integer() })
const StoredReport = Type.Object({
  separator: Type.Optional(Nullable(Type.String())),
  timezone: Type.Optional(Type.String()),
  rejections: Type.Optional(Type.Array(Type.Object({ line: Type.Integer(), reason: Type.String(), column: Type.Optional(Type.String()) }))),
  unmappedTags: Type.Optional(Type.Array(Type.Object({ tag: Type.String(), rows: StoredCount }))),
  emptyCells: Type.Optional(StoredCount),
  sentinelCells: Type.Optional(StoredCount),
  valuesRead: Type.Optional(StoredCount),
  duplicatesInFile: Type.Optional(StoredCount),
  forcedOver: Type.Optional(Nullable(Type.String())),
  collisions: Type.Optional(
    Type.Array(
      Type.Object({
        instanceId: Type.String(),
        tagKey: Type.String(),
        ts: StoredTime,
        resolution: Type.Union([Type.Literal('keptStored'), Type.Literal('replacedStored')]),
        kept: StoredCollisionValue,
        discarded: StoredCollisionValue,
      }),
    ),
  ),
})
const storedJsonRules = recordRules(Type.Object({ tags: StoredCoverage, report: StoredReport }))

/** `text` parsed as JSON, or undefined (a column's JSON is checked before its row's rules: value-rules.ts). */
function parsedJson(text: unknown): unknown {
  try {
    return typeof text === 'string' ? JSON.parse(text) : undefined
  } catch {
    return undefined
  }
}

/**
 * The first rule a stored batch row breaks: a status a batch can have (`open` for a live batch only), counts not
 * negative, and its `tags` and `report` JSON of the shape its reads take (times within the years 0000–9999).
 */
export function batchRowBreak(row: Row): RuleBreak | undefined {
  if (!BATCH_STATUSES.includes(row.status as string)) return { pointer: '/status', message: `must be one of ${BATCH_STATUSES.join(', ')}` }
  if (row.status === 'open' && row.format !== 'live') return { pointer: '/status', message: 'may be open for a batch of format live only' }
  for (const [column, pointer] of BATCH_COUNTS) if (Number(row[column]) < 0) return { pointer, message: 'must be >= 0' }
  return storedJsonRules({ tags: parsedJson(row.tags), report: parsedJson(row.report) })
}
