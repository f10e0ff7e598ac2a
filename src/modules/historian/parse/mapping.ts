import { readCsvBatches } from './csv.ts'
import type { CsvRow } from './csv.ts'
import { HistorianMappingInvalid } from './errors.ts'
import type { MappingProblem } from './errors.ts'
import { INSTANCE_LIMITS } from '../../instances/limits.ts'
import { findColumn } from './header.ts'
import { parseDecimal } from './numbers.ts'
import type { ByteSource } from './types.ts'
import { quoted } from '../../../errors/quoted.ts'

/** Where one historian tag's samples go. */
export interface TagMapping {
  instanceId: string
  tagKey: string
  /** Null when the file gives none. */
  unit: string | null
  /** Multiplier applied to values; 1 when the file gives none. */
  scale: number
}

const COLUMNS = {
  historianTag: ['historian_tag'],
  instanceId: ['instance_id'],
  tagKey: ['tag_key'],
  unit: ['unit'],
  scale: ['scale'],
}
const MAX_PROBLEMS = 100

/**
 * The longest historian tag name a mapping names (session 26): longer than any historian's own (PI's 1 023, AVEVA's
 * 256); a batch lists and remembers unmapped tags by name, which a row of 1 MiB made 1 MiB each.
 */
export const MAX_HISTORIAN_TAG_LENGTH = 1024

type Columns = Record<keyof typeof COLUMNS, number>

/**
 * Parses a mapping CSV `historian_tag,instance_id,tag_key[,unit][,scale]` (header required,
 * names case-insensitive, `,` or `;`). Returns historian tag → mapping, tags compared
 * exactly after trimming. Throws HistorianMappingInvalid listing every problem (up to 100),
 * each with its line; a tag mapped twice is refused naming both lines.
 */
export async function parseMappingCsv(source: ByteSource | string): Promise<Map<string, TagMapping>> {
  const mappings = new Map<string, TagMapping>()
  const firstLine = new Map<string, number>()
  const problems: MappingProblem[] = []
  let columns: Columns | undefined
  for await (const rows of readCsvBatches(typeof source === 'string' ? [source] : source)) {
    for (const row of rows) {
      if (row.fields.every((f) => f.trim() === '')) continue
      if (columns === undefined) {
        columns = readHeader(row, problems)
        if (columns === undefined) throw new HistorianMappingInvalid(problems)
        continue
      }
      const mapping = readRow(row, columns, problems)
      if (mapping === undefined) continue
      const [tag, value] = mapping
      const seenAt = firstLine.get(tag)
      if (seenAt !== undefined) {
        problems.push({ line: row.line, message: `historian tag ${quoted(tag)} is mapped twice, on lines ${seenAt} and ${row.line}` })
      } else {
        firstLine.set(tag, row.line)
        mappings.set(tag, value)
      }
      if (problems.length >= MAX_PROBLEMS) throw new HistorianMappingInvalid(problems)
    }
  }
  if (columns === undefined) problems.push({ line: 1, message: 'the file is empty; a header historian_tag,instance_id,tag_key is required' })
  if (problems.length > 0) throw new HistorianMappingInvalid(problems)
  return mappings
}

function readHeader(row: CsvRow, problems: MappingProblem[]): Columns | undefined {
  const at = (aliases: readonly string[]) => findColumn(row.fields, aliases)
  const columns: Columns = {
    historianTag: at(COLUMNS.historianTag),
    instanceId: at(COLUMNS.instanceId),
    tagKey: at(COLUMNS.tagKey),
    unit: at(COLUMNS.unit),
    scale: at(COLUMNS.scale),
  }
  const missing = (['historian_tag', 'instance_id', 'tag_key'] as const).filter((_, i) => [columns.historianTag, columns.instanceId, columns.tagKey][i] === -1)
  if (missing.length === 0) return columns
  problems.push({ line: row.line, message: `the header lacks ${missing.join(', ')}; found ${quoted(row.fields.join(','))}` })
  return undefined
}

function readRow(row: CsvRow, columns: Columns, problems: MappingProblem[]): [string, TagMapping] | undefined {
  const cell = (index: number) => (index >= 0 ? (row.fields[index] ?? '').trim() : '')
  const tag = cell(columns.historianTag)
  const instanceId = cell(columns.instanceId)
  const tagKey = cell(columns.tagKey)
  const scaleText = cell(columns.scale)
  const scale = scaleText === '' ? 1 : parseDecimal(scaleText, '.')
  const before = problems.length
  if (tag === '') problems.push({ line: row.line, message: 'historian_tag is empty' })
  if (instanceId === '') problems.push({ line: row.line, message: 'instance_id is empty' })
  if (tagKey === '') problems.push({ line: row.line, message: 'tag_key is empty' })
  // As long as an instance's id and tag mapping keys may be (the live push and the fleet link's chunks hold them so):
  // a few KiB of key stored unchecked reached PostgreSQL's btree limit of an index elsewhere (a 500).
  if (instanceId.length > INSTANCE_LIMITS.idMaxLength)
    problems.push({ line: row.line, message: `instance_id is longer than ${INSTANCE_LIMITS.idMaxLength} characters` })
  if (tag.length > MAX_HISTORIAN_TAG_LENGTH) problems.push({ line: row.line, message: `historian_tag is longer than ${MAX_HISTORIAN_TAG_LENGTH} characters` })
  if (tagKey.length > INSTANCE_LIMITS.tagKeyMaxLength)
    problems.push({ line: row.line, message: `tag_key is longer than ${INSTANCE_LIMITS.tagKeyMaxLength} characters` })
  if (!Number.isFinite(scale) || scale === 0) problems.push({ line: row.line, message: `scale ${quoted(scaleText)} is not a non-zero number` })
  if (problems.length > before) return undefined
  const unit = cell(columns.unit)
  return [tag, { instanceId, tagKey, unit: unit === '' ? null : unit, scale }]
}
