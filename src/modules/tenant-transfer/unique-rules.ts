import type { Dialect } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'
import { withSystemScope } from '../../db/tenant-scope.ts'
import type { Row, TableShape } from './introspect.ts'
import { findByColumns } from './store.ts'

/**
 * A unique index of a table besides its primary key (issue 24, defect 3): `columns` without `org_id`; `acrossOrgs`
 * when the index has no `org_id`, so that another organisation's record can hold the value (a bound domain).
 * `force` replaces records with the same primary key only; a record of another key holding a unique value is never
 * replaced or removed, so such an import changes nothing and answers 409 naming both records.
 */
export interface UniqueRule {
  columns: string[]
  acrossOrgs: boolean
}

export interface UniqueConflict {
  part: string
  /** The unique rule's columns and the values the package's record gives them. */
  values: Record<string, unknown>
  /** The package's record (its primary key without org_id). */
  record: Record<string, unknown>
  /** The record that holds the values: null when it is another organisation's (never named). */
  heldBy: Record<string, unknown> | null
  heldIn: 'this organisation' | 'the package' | 'another organisation'
}

export function uniqueRulesOf(indexes: string[][]): UniqueRule[] {
  return indexes.map((columns) => ({ columns: columns.filter((c) => c !== 'org_id'), acrossOrgs: !columns.includes('org_id') }))
}

const pick = (row: Row, columns: string[]) => Object.fromEntries(columns.map((c) => [c, row[c]]))
const textOf = (row: Row, columns: string[]) => JSON.stringify(columns.map((c) => String(row[c])))
const holds = (row: Row, rule: UniqueRule) => rule.columns.every((c) => row[c] !== null && row[c] !== undefined) // NULLs never collide

/**
 * The rows about to be written whose unique values another record holds: another row of the batch, or a record of
 * the organisation as it stands in `db` (the import's transaction: rows written by earlier batches included).
 */
export async function findUniqueConflicts(
  db: Db,
  dialect: Dialect,
  part: string,
  shape: TableShape,
  orgId: string,
  rules: UniqueRule[],
  rows: Row[],
): Promise<UniqueConflict[]> {
  const key = shape.primaryKey.filter((c) => c !== 'org_id')
  const conflicts: UniqueConflict[] = []
  for (const rule of rules) {
    const candidates = rows.filter((r) => holds(r, rule))
    if (candidates.length === 0) continue
    const byValues = new Map<string, Row>()
    for (const row of candidates) {
      const first = byValues.get(textOf(row, rule.columns))
      if (first && textOf(first, key) !== textOf(row, key))
        conflicts.push({ part, values: pick(row, rule.columns), record: pick(row, key), heldBy: pick(first, key), heldIn: 'the package' })
      else byValues.set(textOf(row, rule.columns), row)
    }
    const found = await findByColumns(db, dialect, shape, { orgId, elsewhere: false }, [...new Set([...key, ...rule.columns])], rule.columns, [
      ...byValues.values(),
    ])
    for (const holder of found) {
      const row = byValues.get(textOf(holder, rule.columns))
      if (row && textOf(holder, key) !== textOf(row, key))
        conflicts.push({ part, values: pick(row, rule.columns), record: pick(row, key), heldBy: pick(holder, key), heldIn: 'this organisation' })
    }
  }
  return conflicts
}

/** The rows whose values of a rule without `org_id` another organisation holds (looked up in the system scope). */
export async function findHeldElsewhere(
  db: Db,
  dialect: Dialect,
  part: string,
  shape: TableShape,
  orgId: string,
  rules: UniqueRule[],
  rows: Row[],
): Promise<UniqueConflict[]> {
  const key = shape.primaryKey.filter((c) => c !== 'org_id')
  const conflicts: UniqueConflict[] = []
  for (const rule of rules.filter((r) => r.acrossOrgs)) {
    const candidates = rows.filter((r) => holds(r, rule))
    if (candidates.length === 0) continue
    const found = await withSystemScope(() => findByColumns(db, dialect, shape, { orgId, elsewhere: true }, rule.columns, rule.columns, candidates))
    const taken = new Set(found.map((f) => textOf(f, rule.columns)))
    for (const row of candidates) {
      if (taken.has(textOf(row, rule.columns)))
        conflicts.push({ part, values: pick(row, rule.columns), record: pick(row, key), heldBy: null, heldIn: 'another organisation' })
    }
  }
  return conflicts
}
