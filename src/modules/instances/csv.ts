import { invalidField } from '../../errors/domain-error.ts'
import { quoted } from '../../errors/quoted.ts'
import { findUnsafeJson, MAX_JSON_DEPTH } from '../../http/input-guard.ts'
import type { BulkItem } from './bulk.ts'
import { INSTANCE_LIMITS } from './limits.ts'

/** RFC 4180 records with the line each starts on; quoted fields may hold commas, quotes ("") and line breaks. */
export function parseCsvRecords(text: string): Array<{ line: number; fields: string[] }> {
  const records: Array<{ line: number; fields: string[] }> = []
  let fields: string[] = []
  let field = ''
  let line = 1
  let recordLine = 1
  let quoted = false
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0
  const endRecord = () => {
    fields.push(field)
    if (!(fields.length === 1 && fields[0] === '')) records.push({ line: recordLine, fields })
    fields = []
    field = ''
  }
  for (; i < text.length; i++) {
    const ch = text[i]!
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"'
          i++
        } else quoted = false
      } else {
        if (ch === '\n') line++
        field += ch
      }
      continue
    }
    if (ch === '"' && field === '') quoted = true
    else if (ch === ',') {
      fields.push(field)
      field = ''
    } else if (ch === '\r' && text[i + 1] === '\n') continue
    else if (ch === '\n' || ch === '\r') {
      endRecord()
      line++
      recordLine = line
    } else field += ch
  }
  if (quoted) throw invalidField('/', `line ${recordLine}: a quoted field is not closed`)
  if (field !== '' || fields.length > 0) endRecord()
  return records
}

const PLAIN = new Set(['id', 'name', 'typeId', 'typeVersion', 'assetNumber', 'controllerId', 'area'])
const JSON_COLUMNS = new Set(['config', 'tagMappings'])
const REQUIRED = ['id', 'name', 'typeId', 'assetNumber', 'controllerId']

/** The most columns a header can name: every field once and a `tag:` column for each mapping an instance can have. */
export const MAX_CSV_COLUMNS = PLAIN.size + JSON_COLUMNS.size + INSTANCE_LIMITS.tagMappingsMaxKeys

/** CSV to bulk items: the header names the fields, `tag:NAME` columns add mappings, empty cells are absent. */
export function csvToBulkItems(text: string, maxItems: number): BulkItem[] {
  const records = parseCsvRecords(text)
  const header = records.shift()
  if (!header) throw invalidField('/', 'the CSV has no header row')
  // Bounded before anything walks the columns: every line is read column by column.
  if (header.fields.length > MAX_CSV_COLUMNS) {
    throw invalidField(
      '/',
      `the header has ${header.fields.length} columns; at most ${MAX_CSV_COLUMNS} (each field once and up to ${INSTANCE_LIMITS.tagMappingsMaxKeys} tag: columns)`,
    )
  }
  const columns = header.fields.map((c) => c.trim())
  const seen = new Set<string>()
  columns.forEach((c, i) => {
    if (!PLAIN.has(c) && !JSON_COLUMNS.has(c) && !(c.startsWith('tag:') && c.length > 4))
      throw invalidField('/', `header column ${i + 1} (${quoted(c)}) is not a known column`)
    if (seen.has(c)) throw invalidField('/', `header column ${i + 1} (${quoted(c)}) appears twice`)
    seen.add(c)
  })
  for (const r of REQUIRED) if (!columns.includes(r)) throw invalidField('/', `the header has no ${r} column`)
  if (records.length > maxItems) throw invalidField('/', `at most ${maxItems} lines`)
  return records.map((record) => {
    const value: Record<string, unknown> = {}
    const tags: Record<string, string> = {}
    const problems: Array<{ pointer: string; message: string }> = []
    if (record.fields.length !== columns.length) problems.push({ pointer: '', message: `has ${record.fields.length} cells; the header has ${columns.length}` })
    columns.forEach((column, i) => {
      const cell = record.fields[i] ?? ''
      if (cell === '') return
      if (column.startsWith('tag:')) {
        Object.defineProperty(tags, column.slice(4), { value: cell, enumerable: true, configurable: true, writable: true })
      } else if (JSON_COLUMNS.has(column)) {
        let parsed: unknown
        try {
          parsed = JSON.parse(cell)
        } catch {
          problems.push({ pointer: `/${column}`, message: 'is not valid JSON' })
          return
        }
        // The input guard's rules for a JSON body (http/input-guard.ts): a cell's escapes (`\u0000`, `\ud800`), a
        // number past the largest double and nesting deep enough to overflow the walks of the config reach no further.
        const unsafe = findUnsafeJson(parsed, `/${column}`, MAX_JSON_DEPTH, true)
        if (unsafe) problems.push(unsafe)
        else value[column] = parsed
      } else {
        value[column] = cell
      }
    })
    if (Object.keys(tags).length > 0) {
      const fromJson = value.tagMappings
      // tag:NAME cells win over the same key in a tagMappings cell; a non-object tagMappings cell is left for the schema to refuse.
      value.tagMappings =
        fromJson === undefined ? tags : isPlainObject(fromJson) ? Object.fromEntries([...Object.entries(fromJson), ...Object.entries(tags)]) : fromJson
    }
    return { line: record.line, at: `/line/${record.line}`, id: typeof value.id === 'string' ? value.id : null, value, problems }
  })
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
