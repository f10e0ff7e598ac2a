import type { Dialect } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'
import { describeTable, describeUniqueKeys, type TableShape } from '../../tenant-transfer/introspect.ts'
import { valueRuleText } from '../../tenant-transfer/errors.ts'
import { findValueProblem } from '../../tenant-transfer/value-rules.ts'
import { EXPORTED_TABLES, type ExportedTable } from '../../tenant-transfer/tables.ts'
import { LinkChangeRefused } from '../errors.ts'
import { isAfter, LINKED_TABLES, type Change, type LinkedTable } from './outbox-port.ts'

/**
 * Which way a batch travels: `push` (a site server's changes, applied in the cloud) or `pull` (the cloud's,
 * applied on a site).
 */
export type Flow = 'push' | 'pull'

/** A linked table as this server holds it: its link rules and its introspected shape. */
export interface LinkedShape {
  spec: LinkedTable
  shape: TableShape
  /** The primary key after org_id: what a change's `key` holds, in order. */
  key: string[]
  /** Its JSON text columns and its area's row rules (the tenant package's, tenant-transfer/tables.ts). */
  rules: Pick<ExportedTable, 'json' | 'rules'>
}

// Table shapes per database: introspected once per handle (a running server's schema does not change). Keyed
// weakly by the Kysely instance, so a closed handle takes its cache with it.
const shapesByDb = new WeakMap<Db, Map<string, Promise<TableShape | undefined>>>()

/**
 * The shape of a table, introspected once per database handle (`db`, the cache's key); `via` runs the query (the
 * caller's transaction, so that it takes no second connection from the pool while the transaction holds one).
 */
export function shapeOf(db: Db, dialect: Dialect, table: string, via: Db = db): Promise<TableShape | undefined> {
  let cache = shapesByDb.get(db)
  if (!cache) {
    cache = new Map()
    shapesByDb.set(db, cache)
  }
  let shape = cache.get(table)
  if (!shape) {
    shape = describeTable(via, dialect, table)
    cache.set(table, shape)
  }
  return shape
}

const uniqueKeysByDb = new WeakMap<Db, Map<string, Promise<string[][]>>>()

/** The columns of each unique index of a table other than its primary key, introspected once per database handle. */
export function uniqueKeysOf(db: Db, dialect: Dialect, table: string, via: Db = db): Promise<string[][]> {
  let cache = uniqueKeysByDb.get(db)
  if (!cache) {
    cache = new Map()
    uniqueKeysByDb.set(db, cache)
  }
  let keys = cache.get(table)
  if (!keys) {
    keys = describeUniqueKeys(via, dialect, table)
    cache.set(table, keys)
  }
  return keys
}

const SPECS = new Map(LINKED_TABLES.map((t) => [t.name, t]))
const ROW_RULES = new Map<string, Pick<ExportedTable, 'json' | 'rules'>>(EXPORTED_TABLES.map((t) => [t.name, t]))

/** Whether a table's changes may travel this way: up and both tables go up; down and both come down; a site's
 * edits of down tables go up as proposals (the conflict rule decides), except the cloud's own conflict records. */
function travels(spec: LinkedTable, flow: Flow): boolean {
  if (flow === 'pull') return spec.direction === 'down' || spec.direction === 'both'
  return spec.name !== 'link_conflicts'
}

export interface BatchContext {
  orgId: string
  /** The sites the peer serves (push: the site server's; pull: this site server's own). */
  sites: readonly string[]
  flow: Flow
}

/**
 * Checks every change of a batch before anything is written, and answers the linked shape of each (same order).
 * The first bad change refuses the whole batch (LinkChangeRefused, naming its index, table and the column or rule).
 */
export async function validateBatch(db: Db, dialect: Dialect, batch: readonly Change[], ctx: BatchContext): Promise<LinkedShape[]> {
  const out: LinkedShape[] = []
  const linked = new Map<string, LinkedShape>()
  let previous: { tx: number; seq: number } | undefined
  for (const [index, change] of batch.entries()) {
    const refuse = (rule: string, column?: string) => new LinkChangeRefused(index, change.table, rule, column)
    // Outbox order is (tx, seq): on PostgreSQL a later transaction's change may hold a lower seq.
    if (previous && !isAfter(change, previous))
      throw refuse(
        `its position ${change.tx}.${change.seq} does not follow the previous change's ${previous.tx}.${previous.seq} (a batch is in outbox order, (tx, seq))`,
      )
    previous = change
    const spec = SPECS.get(change.table)
    if (!spec) throw refuse('the table is not linked')
    if (!travels(spec, ctx.flow)) throw refuse(ctx.flow === 'push' ? 'a site server does not send this table' : 'the cloud does not send this table')
    let target = linked.get(spec.name)
    if (!target) {
      const shape = await shapeOf(db, dialect, spec.name)
      if (!shape) throw refuse('this server has no such table')
      target = { spec, shape, key: shape.primaryKey.filter((c) => c !== 'org_id'), rules: ROW_RULES.get(spec.name) ?? {} }
      linked.set(spec.name, target)
    }
    const { shape, key } = target
    const row = change.row
    // Columns: exactly the table's, no more and no fewer.
    for (const column of Object.keys(row)) {
      if (!shape.columns.includes(column)) throw refuse('the table has no such column', column)
    }
    for (const column of shape.columns) {
      if (!Object.hasOwn(row, column)) throw refuse('the row lacks this column', column)
    }
    if (row.org_id !== ctx.orgId) throw refuse('the row belongs to another organisation', 'org_id')
    // Site: the change's site is one of the peer's, and the row's own site column says the same.
    if (spec.siteColumn === null) {
      if (change.site !== '') throw refuse("an organisation-wide row has site ''")
    } else {
      if (!ctx.sites.includes(change.site)) throw refuse(`site ${JSON.stringify(change.site)} is not one of this link's sites`)
      if (row[spec.siteColumn] !== change.site) throw refuse("the row's site differs from the change's site", spec.siteColumn)
    }
    if (change.key.length !== key.length) throw refuse(`the key has ${change.key.length} values; the primary key has ${key.length} (${key.join(', ')})`)
    for (const [i, column] of key.entries()) {
      if (change.key[i] !== row[column]) throw refuse("the key differs from the row's primary-key value", column)
    }
    const problem = findValueProblem(shape, shape.columns, target.rules, row)
    if (problem) throw refuse(valueRuleText(problem), problem.column)
    out.push(target)
  }
  return out
}
