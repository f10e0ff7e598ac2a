import { sql } from 'kysely'
import type { Db, ElectricalNetworkStagingTable } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

/** Staging of a streamed bulk load (migration 1700): `kind` 0 = node, 1 = edge; `position` = index in its array. */
export const NODE = 0
export const EDGE = 1
const STAGING = 'electrical_network_staging' as const

export type StagedRow = ElectricalNetworkStagingTable

/** One chunk of one kind, one statement (its own short transaction). */
export async function insertStaged(db: Db, rows: readonly StagedRow[]): Promise<void> {
  if (rows.length > 0) await db.insertInto(STAGING).values(rows).execute()
}

export function deleteLoad(db: Db, orgId: OrgId, loadId: string) {
  return db.deleteFrom(STAGING).where('org_id', '=', orgId).where('load_id', '=', loadId).executeTakeFirst()
}

/** Loads staged before `before` (epoch ms) by a process that is gone; one organisation's, or every one's (system scope). */
export async function deleteStale(db: Db, before: number, orgId?: OrgId): Promise<number> {
  let query = db.deleteFrom(STAGING).where('staged_at', '<', before)
  if (orgId !== undefined) query = query.where('org_id', '=', orgId)
  return Number((await query.executeTakeFirst()).numDeletedRows)
}

/** Every staged row (start-up on SQLite, where the process owns the database file). */
export async function deleteAllStaged(db: Db): Promise<number> {
  return Number((await db.deleteFrom(STAGING).executeTakeFirst()).numDeletedRows)
}

export async function countStaged(db: Db, orgId?: OrgId): Promise<number> {
  let query = db.selectFrom(STAGING).select((eb) => eb.fn.countAll().as('n'))
  if (orgId !== undefined) query = query.where('org_id', '=', orgId)
  return Number((await query.executeTakeFirstOrThrow()).n)
}

export interface StagedProblemRow {
  position: number
  a: string | null
  b: string | null
}
export interface ProblemQuery {
  rows: StagedProblemRow[]
  count: number
}

const LISTED = 100

// The graph checks are set operations (window functions, IN over the load's node ids), never correlated lookups
// per row: the staging table has no statistics while a load is checked, and a nested loop would be quadratic.
const loadRows = (orgId: OrgId, loadId: string, kind: number) => sql`org_id = ${orgId} and load_id = ${loadId} and kind = ${sql.lit(kind)}`
const nodeIdsOf = (orgId: OrgId, loadId: string) =>
  sql`select node_id from ${sql.table(STAGING)} where ${loadRows(orgId, loadId, NODE)} and node_id is not null`

/** Runs `problems` (a select of position, a, b) for the first LISTED rows by position, and counts them all. */
async function listAndCount(db: Db, problems: ReturnType<typeof sql>): Promise<ProblemQuery> {
  const { rows } = await sql<StagedProblemRow>`select position, a, b from (${problems}) p order by position limit ${sql.lit(LISTED)}`.execute(db)
  const listed = rows.map((r) => ({ position: Number(r.position), a: r.a, b: r.b }))
  if (listed.length < LISTED) return { rows: listed, count: listed.length }
  const { rows: counted } = await sql<{ n: number | string }>`select count(*) as n from (${problems}) p`.execute(db)
  return { rows: listed, count: Number(counted[0]?.n ?? 0) }
}

/** Node ids already used by an earlier node of the load (every later occurrence is a problem). */
export function duplicateNodeIds(db: Db, orgId: OrgId, loadId: string): Promise<ProblemQuery> {
  return listAndCount(
    db,
    sql`select position, node_id as a, null as b from (
    select position, node_id, row_number() over (partition by node_id order by position) as nth
    from ${sql.table(STAGING)} where ${loadRows(orgId, loadId, NODE)}) d where nth > 1`,
  )
}

/**
 * Edges whose `end` names no node of the load. An anti-join, not `NOT IN (…)`: PostgreSQL hashes a NOT IN list only
 * while it fits in work_mem and otherwise rescans it for every edge (a 400 000-node load ran past the statement
 * timeout); a LEFT JOIN … IS NULL is a hash anti-join there (the checks run without nested loops, service/network.ts)
 * and an index lookup per edge on SQLite.
 */
export function unknownEnds(db: Db, orgId: OrgId, loadId: string, end: 'source_id' | 'target_id'): Promise<ProblemQuery> {
  return listAndCount(
    db,
    sql`select e.position, e.${sql.ref(end)} as a, null as b from ${sql.table(STAGING)} e
    left join ${sql.table(STAGING)} n on n.org_id = e.org_id and n.load_id = e.load_id and n.kind = ${sql.lit(NODE)} and n.node_id = e.${sql.ref(end)}
    where e.org_id = ${orgId} and e.load_id = ${loadId} and e.kind = ${sql.lit(EDGE)} and n.node_id is null`,
  )
}

/** Edges from a known node to itself. */
export function selfLoops(db: Db, orgId: OrgId, loadId: string): Promise<ProblemQuery> {
  return listAndCount(
    db,
    sql`select position, source_id as a, null as b from ${sql.table(STAGING)}
    where ${loadRows(orgId, loadId, EDGE)} and source_id = target_id and source_id in (${nodeIdsOf(orgId, loadId)})`,
  )
}

/**
 * Usable edges (both ends known, not a loop) repeating the triple of an earlier edge. Edges sharing a triple are all
 * usable or none is, so repeats are numbered over every edge and only the repeats are checked for known ends.
 */
export function repeatedTriples(db: Db, orgId: OrgId, loadId: string): Promise<ProblemQuery> {
  return listAndCount(
    db,
    sql`select position, source_id as a, target_id as b from (
    select position, source_id, target_id, row_number() over (partition by source_id, target_id, edge_type order by position) as nth
    from ${sql.table(STAGING)} where ${loadRows(orgId, loadId, EDGE)} and source_id <> target_id) r
    where nth > 1 and source_id in (${nodeIdsOf(orgId, loadId)}) and target_id in (${nodeIdsOf(orgId, loadId)})`,
  )
}

/**
 * Kept nodes carry their previous createdAt into the copy (in the replacing transaction, before the old rows go).
 * `UPDATE … FROM` (a join): only the staged nodes the site already has are written, and PostgreSQL hashes the join
 * instead of running a subquery per staged row (a 400 000-node load spent its statement timeout there).
 */
export async function keepCreatedAt(trx: Db, orgId: OrgId, siteCode: string, loadId: string): Promise<number> {
  const result = await trx
    .updateTable(STAGING)
    .from('electrical_nodes')
    .set((eb) => ({ created_at: eb.ref('electrical_nodes.created_at') }))
    .where(`${STAGING}.org_id`, '=', orgId)
    .where(`${STAGING}.load_id`, '=', loadId)
    .where(`${STAGING}.kind`, '=', NODE)
    .where('electrical_nodes.org_id', '=', orgId)
    .where('electrical_nodes.site_code', '=', siteCode)
    .whereRef('electrical_nodes.id', '=', `${STAGING}.node_id`)
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** Copies the load into the site's network (the caller emptied it first); answers the node and edge counts. */
export async function copyLoad(trx: Db, orgId: OrgId, siteCode: string, loadId: string, now: number): Promise<{ nodes: number; edges: number }> {
  const nodes = await trx
    .insertInto('electrical_nodes')
    .columns([
      'org_id',
      'site_code',
      'id',
      'name',
      'node_type',
      'rated_voltage_v',
      'rated_current_a',
      'rated_power_kw',
      'impedance_ohms',
      'cable_size',
      'cable_length_m',
      'protection_curve',
      'protection_pickup_a',
      'protection_tms',
      'description',
      'tag_bindings',
      'metadata',
      'study',
      'created_at',
      'updated_at',
    ])
    .expression(
      trx
        .selectFrom(STAGING)
        .select([
          'org_id',
          'site_code',
          'node_id',
          'name',
          'node_type',
          'rated_voltage_v',
          'rated_current_a',
          'rated_power_kw',
          'impedance_ohms',
          'cable_size',
          'cable_length_m',
          'protection_curve',
          'protection_pickup_a',
          'protection_tms',
          'description',
          'tag_bindings',
          'metadata',
          'study',
        ])
        .select([sql<number>`coalesce(created_at, ${now})`.as('created_at'), sql<number>`${now}`.as('updated_at')])
        .where('org_id', '=', orgId)
        .where('load_id', '=', loadId)
        .where('kind', '=', NODE) as never,
    )
    .executeTakeFirst()
  const edges = await trx
    .insertInto('electrical_edges')
    .columns(['org_id', 'site_code', 'source_id', 'target_id', 'edge_type', 'created_at'])
    .expression(
      trx
        .selectFrom(STAGING)
        .select(['org_id', 'site_code', 'source_id', 'target_id', 'edge_type', sql<number>`${now}`.as('created_at')])
        .where('org_id', '=', orgId)
        .where('load_id', '=', loadId)
        .where('kind', '=', EDGE) as never,
    )
    .executeTakeFirst()
  return { nodes: Number(nodes.numInsertedOrUpdatedRows ?? 0), edges: Number(edges.numInsertedOrUpdatedRows ?? 0) }
}
