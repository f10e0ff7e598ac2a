import { FIRST_ISO_MS, ISO_TIME_RULE, LAST_ISO_MS } from '../../http/input-guard.ts'
import type { TableShape } from './introspect.ts'
import type { ExportedTable, RowRulesContext } from './tables.ts'

/**
 * What a column of this server's table can hold, from its declared type (introspect.ts: the same names on both
 * dialects, as the migrations declare them). SQLite stores any value in any column, so a crafted package's text in an
 * integer column was stored there and refused on PostgreSQL (issue 24, left open): every value is checked against these kinds
 * before its row is written, and answers the same on both databases.
 */
type Kind =
  | { kind: 'integer'; min: number; max: number; text: string }
  | { kind: 'real'; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'binary'; text: string }

const INT2 = { kind: 'integer', min: -32_768, max: 32_767, text: 'an integer from -32768 to 32767' } as const
const INT4 = { kind: 'integer', min: -2_147_483_648, max: 2_147_483_647, text: 'an integer from -2147483648 to 2147483647' } as const
// A package is JSON: an integer past 2^53 - 1 has already lost digits, so bigint holds the safe integers only.
const INT8 = {
  kind: 'integer',
  min: Number.MIN_SAFE_INTEGER,
  max: Number.MAX_SAFE_INTEGER,
  text: `an integer from ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`,
} as const

function kindOf(declared: string | undefined): Kind | undefined {
  const type = (declared ?? '').toLowerCase()
  if (type === 'smallint' || type === 'int2') return INT2
  if (type === 'integer' || type === 'int' || type === 'int4') return INT4
  if (type === 'bigint' || type === 'int8') return INT8
  if (/^(double precision|real|float|numeric|decimal)/.test(type)) return { kind: 'real', text: 'a finite number' }
  if (/text|char|clob/.test(type)) return { kind: 'text', text: 'a string' }
  if (type === 'bytea' || type === 'blob') return { kind: 'binary', text: 'bytes, which a package cannot carry' }
  return undefined
}

/** A column of epoch milliseconds (`created_at`, `first_ts`, `ts`, `shelved_until`): every answer writes it as an ISO 8601 date-time. */
const TIME_COLUMN = /(?:^|_)(?:at|ts|until)$/

export interface ValueProblem {
  column: string
  /** `field`: a rule of the table's area (ExportedTable `rules`), in `expected` with the API field it names. */
  rule: 'not null' | 'type' | 'field'
  /** What the column holds, for the refusal's text (type and field only). */
  expected?: string
}

/**
 * The first value of `row` its column cannot hold: null in a NOT NULL column, a value of another type, an integer
 * out of the column's range, or text that is not JSON in a column `table.json` names; then, once every value fits,
 * the first rule of the table's area the row breaks (`table.rules`). Undefined when the row keeps them all.
 */
export function findValueProblem(
  shape: TableShape,
  columns: readonly string[],
  table: Pick<ExportedTable, 'json' | 'rules'>,
  row: Record<string, unknown>,
  server: RowRulesContext = {},
): ValueProblem | undefined {
  const json = table.json ?? []
  for (const column of columns) {
    const value = row[column]
    if (value === null || value === undefined) {
      if (shape.notNull.has(column)) return { column, rule: 'not null' }
      continue
    }
    const kind = kindOf(shape.types[column])
    if (!fits(kind, value)) return { column, rule: 'type', expected: kind?.text ?? 'a scalar' }
    if (TIME_COLUMN.test(column) && kind?.kind === 'integer' && ((value as number) < FIRST_ISO_MS || (value as number) > LAST_ISO_MS))
      return { column, rule: 'type', expected: ISO_TIME_RULE }
    if (json.includes(column) && !isJsonText(value as string)) return { column, rule: 'type', expected: 'JSON text' }
  }
  const broken = table.rules?.(row, server)
  if (!broken) return undefined
  const field = broken.pointer.slice(1)
  return { column: columnOf(broken.pointer, columns), rule: 'field', expected: `${field} ${broken.message}` }
}

/**
 * The column an API field is stored in: the first step of its pointer that names one in snake case
 * (`/nodeType` → node_type, `/connection/port` → port, `/study/cableSizeMm2` → study).
 */
function columnOf(pointer: string, columns: readonly string[]): string {
  const steps = pointer.split('/').slice(1)
  for (const step of steps) {
    const column = step.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
    if (columns.includes(column)) return column
  }
  return steps[0] ?? ''
}

function fits(kind: Kind | undefined, value: unknown): boolean {
  switch (kind?.kind) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) && value >= kind.min && value <= kind.max
    case 'real':
      return typeof value === 'number' && Number.isFinite(value)
    case 'text':
      return typeof value === 'string'
    case 'binary':
      return false
    default:
      // A type this check does not know: left to the database, but only a scalar can be bound on either driver.
      return typeof value === 'string' || typeof value === 'number'
  }
}

function isJsonText(value: string): boolean {
  try {
    JSON.parse(value)
    return true
  } catch {
    return false
  }
}
