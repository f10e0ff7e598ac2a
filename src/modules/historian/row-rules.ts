import { recordRules, type RuleBreak } from '../../http/validation.ts'
import { RetentionBody } from './live-schemas.ts'
import { TagMarkBody } from './schemas.ts'

// The rules of the historian's settings endpoints, for rows that arrive without a request (a tenant package, the
// fleet link's changes). The pointers name the API's fields.

type Row = Readonly<Record<string, unknown>>

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
