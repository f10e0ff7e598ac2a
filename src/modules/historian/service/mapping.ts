import type { OrgId } from '../../../ids.ts'
import { MappingUnknownInstances, fromParseError } from '../errors.ts'
import { parseMappingCsv, readCsvBatches } from '../parse/index.ts'
import type { TagMapping } from '../parse/index.ts'

export interface InstanceDirectory {
  existingIds(orgId: OrgId, siteCode: string, ids: string[]): Promise<Set<string>>
}

/** Parses the mapping and checks that every instance it names exists in the site (422 naming the lines otherwise). */
export async function readMapping(instances: InstanceDirectory, orgId: OrgId, siteCode: string, bytes: Buffer): Promise<Map<string, TagMapping>> {
  let mapping: Map<string, TagMapping>
  try {
    mapping = await parseMappingCsv([bytes])
  } catch (err) {
    throw fromParseError(err, 'mapping_csv')
  }
  const ids = [...new Set([...mapping.values()].map((m) => m.instanceId))]
  const known = await instances.existingIds(orgId, siteCode, ids)
  const unknown = new Set(ids.filter((id) => !known.has(id)))
  if (unknown.size === 0) return mapping
  throw new MappingUnknownInstances(await linesNaming(bytes, unknown))
}

/** The lines of the mapping that name one of `ids` (only read on failure, for the problem). */
async function linesNaming(bytes: Buffer, ids: Set<string>): Promise<Array<{ line: number; instanceId: string }>> {
  const found: Array<{ line: number; instanceId: string }> = []
  let column = -1
  for await (const rows of readCsvBatches([bytes])) {
    for (const row of rows) {
      if (row.fields.every((f) => f.trim() === '')) continue
      if (column === -1) {
        column = row.fields.findIndex((f) => f.trim().toLowerCase() === 'instance_id')
        continue
      }
      const id = (row.fields[column] ?? '').trim()
      if (ids.has(id)) found.push({ line: row.line, instanceId: id })
    }
  }
  return found
}
