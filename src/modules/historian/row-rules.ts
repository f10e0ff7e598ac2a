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

/** The first rule a stored batch row breaks: a status a batch can have (`open` for a live batch only), counts not negative. */
export function batchRowBreak(row: Row): RuleBreak | undefined {
  if (!BATCH_STATUSES.includes(row.status as string)) return { pointer: '/status', message: `must be one of ${BATCH_STATUSES.join(', ')}` }
  if (row.status === 'open' && row.format !== 'live') return { pointer: '/status', message: 'may be open for a batch of format live only' }
  for (const [column, pointer] of BATCH_COUNTS) if (Number(row[column]) < 0) return { pointer, message: 'must be >= 0' }
  return undefined
}
