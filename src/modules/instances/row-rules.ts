import { recordRules, withoutNulls, type RuleBreak } from '../../http/validation.ts'
import { sizeProblems } from './checks.ts'
import type { InstancesTable } from '../../db/schema.ts'
import { toInstance } from './rows.ts'
import { CreateInstanceBody, type CreateInstanceInput } from './schemas.ts'

// An update (PATCH or the bulk's whole-body replacement) holds an instance to the create's rules.
const instanceRules = recordRules<CreateInstanceInput>(CreateInstanceBody, (instance) => sizeProblems(instance))

/** The first rule of POST …/instances a stored instance row breaks, for rows that arrive without a request. */
export function instanceRowBreak(row: Readonly<Record<string, unknown>>): RuleBreak | undefined {
  // The row's values fit their columns and its JSON text parses (tenant-transfer/value-rules.ts checks them first).
  const { siteId: _siteId, createdAt: _createdAt, updatedAt: _updatedAt, ...fields } = toInstance(row as unknown as InstancesTable)
  const broken = instanceRules(withoutNulls(fields))
  if (broken) return broken
  // A count the service derives: the historian and the poll budget read it instead of the mappings.
  const count = Object.keys(fields.tagMappings).length
  return row.tag_count === count ? undefined : { pointer: '/tagCount', message: `must be the number of tagMappings (${count})` }
}
