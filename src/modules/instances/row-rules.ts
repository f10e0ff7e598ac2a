import { recordRules, withoutNulls, type RuleBreak } from '../../http/validation.ts'
import { sizeProblems } from './checks.ts'
import { CreateInstanceBody, type CreateInstanceInput } from './schemas.ts'

// An update (PATCH or the bulk's whole-body replacement) holds an instance to the create's rules.
const instanceRules = recordRules<CreateInstanceInput>(CreateInstanceBody, (instance) => sizeProblems(instance))

/** The first rule of POST …/instances a stored instance row breaks, for rows that arrive without a request. */
export function instanceRowBreak(row: Readonly<Record<string, unknown>>): RuleBreak | undefined {
  // The JSON columns' text parses (tenant-transfer/value-rules.ts checks it first).
  const tagMappings = JSON.parse(row.tag_mappings as string) as unknown
  const broken = instanceRules(
    withoutNulls({
      id: row.id,
      name: row.name,
      typeId: row.type_id,
      typeVersion: row.type_version,
      assetNumber: row.asset_number,
      controllerId: row.controller_id,
      area: row.area,
      tagMappings,
      config: JSON.parse(row.config as string),
    }),
  )
  if (broken) return broken
  // A count the service derives: the historian and the poll budget read it instead of the mappings.
  const count = Object.keys(tagMappings as object).length
  return row.tag_count === count ? undefined : { pointer: '/tagCount', message: `must be the number of tagMappings (${count})` }
}
