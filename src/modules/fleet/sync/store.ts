import { sql, type RawBuilder } from 'kysely'
import type { Db, LinkConflictsTable } from '../../../db/schema.ts'
import type { TableShape } from '../../tenant-transfer/introspect.ts'

// SQL of the sync engine. The linked tables are reached generically, so these queries are raw SQL built from
// introspected column names (a change's columns were checked against them first: validate.ts).

export type Row = Record<string, unknown>

function keyWhere(orgId: string, key: readonly string[], values: readonly unknown[]): RawBuilder<unknown> {
  return sql.join([sql`${sql.ref('org_id')} = ${orgId}`, ...key.map((c, i) => sql`${sql.ref(c)} = ${values[i]}`)], sql` and `)
}

/**
 * The organisation's row of `shape` with these primary-key values (after org_id), or undefined. `lock` (PostgreSQL):
 * takes the row's lock, so a concurrent writer of the row commits before this reads it, or waits until this commits.
 */
export async function findRow(
  db: Db,
  shape: TableShape,
  orgId: string,
  key: readonly string[],
  values: readonly unknown[],
  lock = false,
): Promise<Row | undefined> {
  const forUpdate = lock ? sql` for update` : sql``
  const { rows } = await sql<Row>`select ${sql.join(shape.columns.map((c) => sql.ref(c)))} from ${sql.table(shape.name)}
    where ${keyWhere(orgId, key, values)}${forUpdate}`.execute(db)
  return rows[0]
}

/**
 * Inserts rows (each holding every column of the table), replacing those with the same primary key. `guard`: never
 * replace an existing row (`insertOnly`), or only one whose `sameColumn` holds the incoming row's value (a key without
 * the site column must not reach another site's row), or only one whose column still holds a value (`replaceWhile`).
 */
export async function upsertRows(
  db: Db,
  shape: TableShape,
  orgId: string,
  rows: readonly Row[],
  guard: { insertOnly?: boolean; sameColumn?: string; replaceWhile?: { column: string; value: string } } = {},
): Promise<void> {
  const columns = shape.columns
  const others = columns.filter((c) => !shape.primaryKey.includes(c))
  const values = sql.join(rows.map((r) => sql`(${sql.join(columns.map((c) => (c === 'org_id' ? orgId : (r[c] ?? null))))})`))
  const conditions = [
    ...(guard.sameColumn === undefined ? [] : [sql`${sql.table(shape.name)}.${sql.ref(guard.sameColumn)} = excluded.${sql.ref(guard.sameColumn)}`]),
    ...(guard.replaceWhile === undefined ? [] : [sql`${sql.table(shape.name)}.${sql.ref(guard.replaceWhile.column)} = ${guard.replaceWhile.value}`]),
  ]
  const where = conditions.length === 0 ? sql`` : sql` where ${sql.join(conditions, sql` and `)}`
  const update =
    others.length === 0 || guard.insertOnly
      ? sql`do nothing`
      : sql`do update set ${sql.join(others.map((c) => sql`${sql.ref(c)} = excluded.${sql.ref(c)}`))}${where}`
  await sql`insert into ${sql.table(shape.name)} (${sql.join(columns.map((c) => sql.ref(c)))}) values ${values}
    on conflict (${sql.join(shape.primaryKey.map((c) => sql.ref(c)))}) ${update}`.execute(db)
}

/** Deletes the organisation's row with these key values; `same` narrows it to a row whose column holds that value. */
export async function deleteRow(
  db: Db,
  shape: TableShape,
  orgId: string,
  key: readonly string[],
  values: readonly unknown[],
  same?: { column: string; value: unknown },
): Promise<void> {
  const extra = same === undefined ? sql`` : sql` and ${sql.ref(same.column)} = ${same.value}`
  await sql`delete from ${sql.table(shape.name)} where ${keyWhere(orgId, key, values)}${extra}`.execute(db)
}

/**
 * Deletes the organisation's rows of `shape` that hold `row`'s values in one of `uniqueKeys` (column lists, org_id
 * included or not) under another primary key: what stands in the way of writing `row`. Answers how many went.
 */
export async function deleteUniqueHolders(db: Db, shape: TableShape, orgId: string, row: Row, uniqueKeys: readonly string[][]): Promise<number> {
  const key = shape.primaryKey.filter((c) => c !== 'org_id')
  let deleted = 0
  for (const columns of uniqueKeys) {
    const own = columns.filter((c) => c !== 'org_id')
    if (own.length === 0 || own.some((c) => row[c] === null || row[c] === undefined)) continue // null never clashes
    const same = sql.join(
      own.map((c) => sql`${sql.ref(c)} = ${row[c]}`),
      sql` and `,
    )
    const other = sql.join(
      key.map((c) => sql`${sql.ref(c)} = ${row[c]}`),
      sql` and `,
    )
    const result = await sql`delete from ${sql.table(shape.name)} where ${sql.ref('org_id')} = ${orgId} and ${same} and not (${other})`.execute(db)
    deleted += Number(result.numAffectedRows ?? 0)
  }
  return deleted
}

export async function savepoint(db: Db, name: string): Promise<void> {
  await sql`savepoint ${sql.raw(name)}`.execute(db)
}

export async function rollbackToSavepoint(db: Db, name: string): Promise<void> {
  await sql`rollback to savepoint ${sql.raw(name)}`.execute(db)
}

export async function releaseSavepoint(db: Db, name: string): Promise<void> {
  await sql`release savepoint ${sql.raw(name)}`.execute(db)
}

export interface MarkRow {
  epoch: string
  tx: number
  seq: number
  digest: string | null
}

/** The mark of a peer; `lock` takes the row lock on PostgreSQL, so two pushes of one peer apply one after the other. */
export async function findMark(db: Db, orgId: string, peer: string, lock: boolean): Promise<MarkRow | undefined> {
  let q = db.selectFrom('link_marks').select(['epoch', 'tx', 'seq', 'digest']).where('org_id', '=', orgId).where('peer', '=', peer)
  if (lock) q = q.forUpdate()
  const row = await q.executeTakeFirst()
  return row && { epoch: row.epoch, tx: Number(row.tx), seq: Number(row.seq), digest: row.digest }
}

/** Creates a peer's mark at the start of an epoch unless one exists (first contact; a concurrent one finds it). */
export async function ensureMark(db: Db, orgId: string, peer: string, epoch: string, now: number): Promise<void> {
  await db
    .insertInto('link_marks')
    .values({ org_id: orgId, peer, epoch, tx: 0, seq: 0, digest: null, updated_at: now })
    .onConflict((oc) => oc.columns(['org_id', 'peer']).doNothing())
    .execute()
}

export async function writeMark(db: Db, orgId: string, peer: string, mark: MarkRow, now: number): Promise<void> {
  await db
    .updateTable('link_marks')
    .set({ epoch: mark.epoch, tx: mark.tx, seq: mark.seq, digest: mark.digest, updated_at: now })
    .where('org_id', '=', orgId)
    .where('peer', '=', peer)
    .execute()
}

/** The epoch a site server enrolled with (cloud), or undefined when the row or its epoch is absent. */
export async function findServerEpoch(db: Db, orgId: string, serverId: string): Promise<string | undefined> {
  const row = await db.selectFrom('site_servers').select('epoch').where('org_id', '=', orgId).where('id', '=', serverId).executeTakeFirst()
  return row?.epoch ?? undefined
}

export async function setBase(db: Db, orgId: string, table: string, rowKey: string, version: number): Promise<void> {
  await db
    .insertInto('link_base')
    .values({ org_id: orgId, table_name: table, row_key: rowKey, version })
    .onConflict((oc) => oc.columns(['org_id', 'table_name', 'row_key']).doUpdateSet({ version }))
    .execute()
}

export async function dropBase(db: Db, orgId: string, table: string, rowKey: string): Promise<void> {
  await db.deleteFrom('link_base').where('org_id', '=', orgId).where('table_name', '=', table).where('row_key', '=', rowKey).execute()
}

/** A conflict record as stored, without its organisation. */
export type ConflictRow = Omit<LinkConflictsTable, 'org_id'>

export async function insertConflicts(db: Db, orgId: string, rows: readonly ConflictRow[]): Promise<void> {
  if (rows.length === 0) return
  await db
    .insertInto('link_conflicts')
    .values(rows.map((r) => ({ org_id: orgId, ...r })))
    .execute()
}

const CONFLICT_COLUMNS = [
  'id',
  'server_id',
  'table_name',
  'site_code',
  'row_key',
  'losing_op',
  'losing_row',
  'losing_at',
  'winning_op',
  'winning_row',
  'recorded_at',
  'resolved_at',
  'resolved_by',
  'resolution',
] as const

/** Newest first (recorded_at, then id, descending); `before` continues after the last row of the previous page. */
export async function listConflicts(
  db: Db,
  orgId: string,
  o: { limit: number; unresolved: boolean; before?: { recordedAt: number; id: string } },
): Promise<ConflictRow[]> {
  let q = db.selectFrom('link_conflicts').select(CONFLICT_COLUMNS).where('org_id', '=', orgId)
  if (o.unresolved) q = q.where('resolved_at', 'is', null)
  const before = o.before
  if (before) {
    q = q.where((eb) => eb.or([eb('recorded_at', '<', before.recordedAt), eb.and([eb('recorded_at', '=', before.recordedAt), eb('id', '<', before.id)])]))
  }
  const rows = await q.orderBy('recorded_at', 'desc').orderBy('id', 'desc').limit(o.limit).execute()
  return rows.map(numbersOf)
}

export async function findConflict(db: Db, orgId: string, id: string, lock: boolean): Promise<ConflictRow | undefined> {
  let q = db.selectFrom('link_conflicts').select(CONFLICT_COLUMNS).where('org_id', '=', orgId).where('id', '=', id)
  if (lock) q = q.forUpdate()
  const row = await q.executeTakeFirst()
  return row && numbersOf(row)
}

export async function resolveConflict(db: Db, orgId: string, id: string, o: { at: number; by: string; resolution: string }): Promise<void> {
  await db
    .updateTable('link_conflicts')
    .set({ resolved_at: o.at, resolved_by: o.by, resolution: o.resolution })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .execute()
}

function numbersOf(r: ConflictRow): ConflictRow {
  return { ...r, losing_at: Number(r.losing_at), recorded_at: Number(r.recorded_at), resolved_at: r.resolved_at === null ? null : Number(r.resolved_at) }
}
