import type { Dialect } from '../../db/connect.ts'
import type { Db, ElectricalEdgesTable, ElectricalNodesTable } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export type NodeChanges = Partial<Omit<ElectricalNodesTable, 'org_id' | 'site_code' | 'id' | 'created_at' | 'tag_bindings' | 'metadata'>>

// Rows per multi-row INSERT: 20 node columns × 1000 stays under PostgreSQL's 65 535 and SQLite's 32 766 parameters.
const NODE_CHUNK = 1000
const EDGE_CHUNK = 2000

export function insertNode(db: Db, row: ElectricalNodesTable) {
  return db.insertInto('electrical_nodes').values(row).execute()
}

export async function insertNodes(db: Db, rows: readonly ElectricalNodesTable[]): Promise<void> {
  for (let i = 0; i < rows.length; i += NODE_CHUNK)
    await db
      .insertInto('electrical_nodes')
      .values(rows.slice(i, i + NODE_CHUNK))
      .execute()
}

export function findNode(db: Db, orgId: OrgId, siteCode: string, id: string) {
  return db.selectFrom('electrical_nodes').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode).where('id', '=', id).executeTakeFirst()
}

export function listNodes(db: Db, orgId: OrgId, siteCode: string, options: { limit: number; after?: string; nodeType?: number }) {
  let query = db.selectFrom('electrical_nodes').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode)
  if (options.after !== undefined) query = query.where('id', '>', options.after)
  if (options.nodeType !== undefined) query = query.where('node_type', '=', options.nodeType)
  return query
    .orderBy('id')
    .limit(options.limit + 1)
    .execute()
}

/** Every node of the site, in no particular order (callers sort in code, the same on both dialects). */
export function allNodes(db: Db, orgId: OrgId, siteCode: string) {
  return db.selectFrom('electrical_nodes').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode).execute()
}

/** What topology reads of every node (no JSON columns, no text fields): keeps 50 000-node queries lean. */
export function topologyNodes(db: Db, orgId: OrgId, siteCode: string) {
  return db.selectFrom('electrical_nodes').select(['id', 'node_type']).where('org_id', '=', orgId).where('site_code', '=', siteCode).execute()
}

/** What protection and the pandapower export read of every node. */
export function engineeringNodes(db: Db, orgId: OrgId, siteCode: string) {
  return db
    .selectFrom('electrical_nodes')
    .select([
      'id',
      'node_type',
      'name',
      'rated_voltage_v',
      'rated_current_a',
      'rated_power_kw',
      'impedance_ohms',
      'cable_size',
      'cable_length_m',
      'protection_curve',
      'protection_pickup_a',
      'protection_tms',
      'study',
    ])
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .execute()
}

export function edgeTriples(db: Db, orgId: OrgId, siteCode: string) {
  return db
    .selectFrom('electrical_edges')
    .select(['source_id', 'target_id', 'edge_type'])
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .execute()
}

export function allNodeIds(db: Db, orgId: OrgId, siteCode: string) {
  return db.selectFrom('electrical_nodes').select(['id', 'created_at']).where('org_id', '=', orgId).where('site_code', '=', siteCode).execute()
}

export function updateNode(db: Db, orgId: OrgId, siteCode: string, id: string, changes: NodeChanges) {
  return db.updateTable('electrical_nodes').set(changes).where('org_id', '=', orgId).where('site_code', '=', siteCode).where('id', '=', id).executeTakeFirst()
}

export function deleteNode(db: Db, orgId: OrgId, siteCode: string, id: string) {
  return db.deleteFrom('electrical_nodes').where('org_id', '=', orgId).where('site_code', '=', siteCode).where('id', '=', id).executeTakeFirst()
}

export async function countNodes(db: Db, orgId: OrgId, siteCode: string): Promise<number> {
  const row = await db
    .selectFrom('electrical_nodes')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function countEdges(db: Db, orgId: OrgId, siteCode: string): Promise<number> {
  const row = await db
    .selectFrom('electrical_edges')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export function insertEdge(db: Db, row: ElectricalEdgesTable) {
  return db.insertInto('electrical_edges').values(row).execute()
}

export async function insertEdges(db: Db, rows: readonly ElectricalEdgesTable[]): Promise<void> {
  for (let i = 0; i < rows.length; i += EDGE_CHUNK)
    await db
      .insertInto('electrical_edges')
      .values(rows.slice(i, i + EDGE_CHUNK))
      .execute()
}

export function findEdge(db: Db, orgId: OrgId, siteCode: string, key: { sourceId: string; targetId: string; edgeType: number }) {
  return db
    .selectFrom('electrical_edges')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('source_id', '=', key.sourceId)
    .where('target_id', '=', key.targetId)
    .where('edge_type', '=', key.edgeType)
    .executeTakeFirst()
}

export function deleteEdge(db: Db, orgId: OrgId, siteCode: string, key: { sourceId: string; targetId: string; edgeType: number }) {
  return db
    .deleteFrom('electrical_edges')
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where('source_id', '=', key.sourceId)
    .where('target_id', '=', key.targetId)
    .where('edge_type', '=', key.edgeType)
    .executeTakeFirst()
}

export function listEdges(db: Db, orgId: OrgId, siteCode: string, options: { limit: number; after?: readonly [string, string, number]; nodeId?: string }) {
  let query = db.selectFrom('electrical_edges').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode)
  if (options.nodeId !== undefined) {
    const nodeId = options.nodeId
    query = query.where((eb) => eb.or([eb('source_id', '=', nodeId), eb('target_id', '=', nodeId)]))
  }
  if (options.after !== undefined) {
    const [s, t, e] = options.after
    query = query.where((eb) =>
      eb.or([
        eb('source_id', '>', s),
        eb.and([eb('source_id', '=', s), eb('target_id', '>', t)]),
        eb.and([eb('source_id', '=', s), eb('target_id', '=', t), eb('edge_type', '>', e)]),
      ]),
    )
  }
  return query
    .orderBy('source_id')
    .orderBy('target_id')
    .orderBy('edge_type')
    .limit(options.limit + 1)
    .execute()
}

export function allEdges(db: Db, orgId: OrgId, siteCode: string) {
  return db.selectFrom('electrical_edges').selectAll().where('org_id', '=', orgId).where('site_code', '=', siteCode).execute()
}

export async function countEdgesTouching(db: Db, orgId: OrgId, siteCode: string, nodeId: string): Promise<number> {
  const row = await db
    .selectFrom('electrical_edges')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where((eb) => eb.or([eb('source_id', '=', nodeId), eb('target_id', '=', nodeId)]))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export function deleteEdgesTouching(db: Db, orgId: OrgId, siteCode: string, nodeId: string) {
  return db
    .deleteFrom('electrical_edges')
    .where('org_id', '=', orgId)
    .where('site_code', '=', siteCode)
    .where((eb) => eb.or([eb('source_id', '=', nodeId), eb('target_id', '=', nodeId)]))
    .executeTakeFirst()
}

/** Removes the whole network of a site: edges first, so no node delete trips the edge foreign keys. */
export async function deleteNetwork(db: Db, orgId: OrgId, siteCode: string): Promise<void> {
  await db.deleteFrom('electrical_edges').where('org_id', '=', orgId).where('site_code', '=', siteCode).execute()
  await db.deleteFrom('electrical_nodes').where('org_id', '=', orgId).where('site_code', '=', siteCode).execute()
}

/**
 * Serialises writers of one site's network on PostgreSQL (row lock on the site until the transaction ends), so
 * two bulk replacements never interleave. SQLite has one writer at a time already and no FOR UPDATE.
 * Answers whether the site exists.
 */
export async function lockSite(db: Db, dialect: Dialect, orgId: OrgId, siteCode: string): Promise<boolean> {
  let query = db.selectFrom('sites').select('code').where('org_id', '=', orgId).where('code', '=', siteCode)
  if (dialect === 'postgres') query = query.forUpdate()
  return (await query.executeTakeFirst()) !== undefined
}
