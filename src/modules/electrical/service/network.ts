import { randomUUID } from 'node:crypto'
import type { Readable } from 'node:stream'
import { sql } from 'kysely'
import { isForeignKeyViolation, isUniqueViolation } from '../../../db/constraint-errors.ts'
import type { Actor } from '../../../identity.ts'
import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import type { ElectricalEdgesTable, ElectricalNodesTable } from '../../../db/schema.ts'
import { lockUntilCommit } from '../../../db/transaction-lock.ts'
import { createTurns } from '../../../db/turns.ts'
import { invalidField, NotFound } from '../../../errors/domain-error.ts'
import { decodeCursor, toPage } from '../../../http/paging.ts'
import type { OrgId } from '../../../ids.ts'
import { recordAudit } from '../../audit/service.ts'
import type { SitesService } from '../../sites/service.ts'
import { EDGE_TYPES } from '../codes.ts'
import { createOnly, EdgeEndsUnknown, EdgeExists, NetworkWritesQueueFull, NodeHasEdges, NodeIdTaken, notUpdatable, SelfLoop } from '../errors.ts'
import { compareEdges, compareIds, nodeFieldProblems, nodeRow, toEdge, toNode } from '../rows.ts'
import type {
  CreateNodeInput,
  DeleteEdgeQueryInput,
  Edge,
  EdgeInput,
  ListEdgesQueryInput,
  ListNodesQueryInput,
  Node,
  NodeStudyInput,
  UpdateNodeInput,
} from '../schemas.ts'
import { studyProblems } from '../study.ts'
import {
  allEdges,
  allNodes,
  countEdgesTouching,
  countNodes,
  deleteEdge,
  deleteEdgesTouching,
  deleteNetwork,
  deleteNode,
  findEdge,
  findNode,
  insertEdge,
  insertNode,
  listEdges,
  listNodes,
  lockSite,
  updateNode,
  type NodeChanges,
} from '../store.ts'
import { copyLoad, deleteAllStaged, deleteLoad, deleteStale, insertStaged, keepCreatedAt } from '../staging-store.ts'
import { checkStagedGraph, DEFAULT_NETWORK_LOAD, stageDocument, throwProblems, type NetworkLoadLimits } from './network-load.ts'
import type { GraphCache } from './graph-cache.ts'
import type { Db } from '../../../db/schema.ts'

export interface NetworkDeps {
  handle: DatabaseHandle
  clock: Clock
  sites: SitesService
  /** Bounds of the streamed bulk load, and the age after which a load's staging rows are an orphan's. */
  networkLoad?: NetworkLoadLimits & { staleAfterMs: number }
  /** Network writes of all sites that may wait for their site's turn (or run) in the process at once; one more is a 503. */
  maxWaitingWrites?: number
}

/** Default of `maxWaitingWrites`: far above what people editing networks send at once, a bound on a burst's memory. */
const MAX_WAITING_WRITES = 1000

/** `type` of DELETE …/edges: the code `0`…`4` or the name (`Cable`, any case). */
export function parseEdgeType(raw: string): number {
  const trimmed = raw.trim()
  if (/^[0-9]+$/.test(trimmed) && Number(trimmed) < EDGE_TYPES.length) return Number(trimmed)
  const byName = EDGE_TYPES.find((t) => t.name.toLowerCase() === trimmed.toLowerCase())
  if (byName) return byName.code
  throw invalidField('/type', `must be an edge type code 0 to ${EDGE_TYPES.length - 1} or its name (${EDGE_TYPES.map((t) => t.name).join(', ')})`, 'query')
}

export function createNetworkService(deps: NetworkDeps, graphs: GraphCache) {
  const { handle, clock, sites } = deps
  const load = deps.networkLoad ?? DEFAULT_NETWORK_LOAD
  const db = handle.db
  const maxWaiting = deps.maxWaitingWrites ?? MAX_WAITING_WRITES
  const inSiteTurn = createTurns(maxWaiting, () => new NetworkWritesQueueFull(maxWaiting))

  /**
   * A write to the site's network: one transaction that also tells the other processes (their graph caches drop
   * it, see graph-cache.ts); this process's cached graphs of the site are forgotten however it ends. The writes of one
   * site's network take turns (PostgreSQL: an advisory lock across the cell's processes) before they touch a row: a
   * whole-network replace deleting the edges while an edit locked some of them in another order was a deadlock, a 500
   * (session 20's rehearsal, org-concurrency.test.ts). In this process they take turns first, before borrowing a
   * connection: each write waiting in the lock held one, and a site's writes behind a long replace took the whole pool
   * (503 for every other request of the process; electrical-site-lock.test.ts).
   */
  async function writeNetwork<T>(orgId: OrgId, siteCode: string, work: (trx: Db) => Promise<T>): Promise<T> {
    try {
      return await inSiteTurn(`${orgId}\u0000${siteCode}`, () =>
        db.transaction().execute(async (trx) => {
          await lockUntilCommit(trx, handle.dialect, `electrical ${orgId} ${siteCode}`)
          const out = await work(trx)
          await handle.announceInvalidation(trx)
          return out
        }),
      )
    } finally {
      graphs.forget(orgId, siteCode)
    }
  }

  async function requireNodeRow(orgId: OrgId, siteCode: string, id: string): Promise<ElectricalNodesTable> {
    const row = await findNode(db, orgId, siteCode, id)
    if (!row) throw new NotFound()
    return row
  }

  return {
    async createNode(orgId: OrgId, actor: Actor, siteCode: string, input: CreateNodeInput): Promise<Node> {
      await sites.require(orgId, siteCode)
      throwProblems(nodeFieldProblems(input))
      const now = clock.now()
      const row = nodeRow(orgId, siteCode, input, now, now)
      try {
        await writeNetwork(orgId, siteCode, async (trx) => {
          if (await findNode(trx, orgId, siteCode, input.id)) throw new NodeIdTaken(input.id)
          await insertNode(trx, row)
          await recordAudit(trx, clock, orgId, actor, {
            action: 'electrical.node.created',
            target: `${siteCode}/${input.id}`,
            detail: { nodeType: input.nodeType },
          })
        })
      } catch (err) {
        if (isUniqueViolation(err)) throw new NodeIdTaken(input.id)
        if (isForeignKeyViolation(err)) throw new NotFound() // the site went meanwhile
        throw err
      }
      return toNode(row)
    },

    async getNode(orgId: OrgId, siteCode: string, id: string): Promise<Node> {
      await sites.require(orgId, siteCode)
      return toNode(await requireNodeRow(orgId, siteCode, id))
    },

    async listNodes(orgId: OrgId, siteCode: string, query: ListNodesQueryInput) {
      await sites.require(orgId, siteCode)
      const limit = query.limit ?? 100
      const after = decodeCursor(query.cursor, ['string'])
      const rows = await listNodes(db, orgId, siteCode, { limit, after: after?.[0] as string | undefined, nodeType: query.nodeType })
      return toPage(rows, limit, toNode, (r) => [r.id])
    },

    /** Spec 2.5: only the fields present change; null clears; id not updatable; tagBindings and metadata create-only. */
    async updateNode(orgId: OrgId, actor: Actor, siteCode: string, id: string, input: UpdateNodeInput): Promise<Node> {
      await sites.require(orgId, siteCode)
      if (input.id !== undefined) throw notUpdatable()
      if (input.tagBindings !== undefined) throw createOnly('tagBindings')
      if (input.metadata !== undefined) throw createOnly('metadata')
      throwProblems(nodeFieldProblems(input))
      const changes: NodeChanges = { updated_at: clock.now() }
      if (input.name !== undefined) changes.name = input.name
      if (input.nodeType !== undefined) changes.node_type = input.nodeType
      if (input.ratedVoltageV !== undefined) changes.rated_voltage_v = input.ratedVoltageV
      if (input.ratedCurrentA !== undefined) changes.rated_current_a = input.ratedCurrentA
      if (input.ratedPowerKw !== undefined) changes.rated_power_kw = input.ratedPowerKw
      if (input.impedanceOhms !== undefined) changes.impedance_ohms = input.impedanceOhms
      if (input.cableSize !== undefined) changes.cable_size = input.cableSize
      if (input.cableLengthM !== undefined) changes.cable_length_m = input.cableLengthM
      if (input.protectionCurve !== undefined) changes.protection_curve = input.protectionCurve
      if (input.protectionPickupA !== undefined) changes.protection_pickup_a = input.protectionPickupA
      if (input.protectionTms !== undefined) changes.protection_tms = input.protectionTms
      if (input.description !== undefined) changes.description = input.description
      if (input.study !== undefined) changes.study = JSON.stringify(input.study ?? {})
      return writeNetwork(orgId, siteCode, async (trx) => {
        if ((input.study != null && input.nodeType === undefined) || (input.study === undefined && input.nodeType !== undefined)) {
          // The study parameters kept or sent must fit the type the node keeps or gets (both sent: checked above).
          const stored = await findNode(trx, orgId, siteCode, id)
          if (!stored) throw new NotFound()
          const study = input.study ?? (JSON.parse(stored.study) as NodeStudyInput)
          throwProblems(studyProblems(study, input.nodeType ?? stored.node_type))
        }
        const result = await updateNode(trx, orgId, siteCode, id, changes)
        if (Number(result.numUpdatedRows) === 0) throw new NotFound()
        await recordAudit(trx, clock, orgId, actor, { action: 'electrical.node.updated', target: `${siteCode}/${id}`, detail: { fields: Object.keys(input) } })
        return toNode((await findNode(trx, orgId, siteCode, id))!)
      })
    },

    /** Refused (409) while edges touch the node, unless `cascade` removes them in the same transaction. */
    async deleteNode(orgId: OrgId, actor: Actor, siteCode: string, id: string, cascade: boolean): Promise<void> {
      await sites.require(orgId, siteCode)
      try {
        await writeNetwork(orgId, siteCode, async (trx) => {
          if (!(await findNode(trx, orgId, siteCode, id))) throw new NotFound()
          const edgeCount = await countEdgesTouching(trx, orgId, siteCode, id)
          if (edgeCount > 0 && !cascade) throw new NodeHasEdges(id, edgeCount)
          if (edgeCount > 0) await deleteEdgesTouching(trx, orgId, siteCode, id)
          const result = await deleteNode(trx, orgId, siteCode, id)
          if (Number(result.numDeletedRows) === 0) throw new NotFound()
          await recordAudit(trx, clock, orgId, actor, { action: 'electrical.node.deleted', target: `${siteCode}/${id}`, detail: { edgesDeleted: edgeCount } })
        })
      } catch (err) {
        // An edge added between the count and the delete: the foreign key refuses, and so do we.
        if (isForeignKeyViolation(err)) throw new NodeHasEdges(id, await countEdgesTouching(db, orgId, siteCode, id))
        throw err
      }
    },

    async createEdge(orgId: OrgId, actor: Actor, siteCode: string, input: EdgeInput): Promise<Edge> {
      await sites.require(orgId, siteCode)
      if (input.sourceId === input.targetId) throw new SelfLoop()
      const row: ElectricalEdgesTable = {
        org_id: orgId,
        site_code: siteCode,
        source_id: input.sourceId,
        target_id: input.targetId,
        edge_type: input.edgeType,
        created_at: clock.now(),
      }
      const checkEnds = async () => {
        const unknown: Array<'sourceId' | 'targetId'> = []
        if (!(await findNode(db, orgId, siteCode, input.sourceId))) unknown.push('sourceId')
        if (!(await findNode(db, orgId, siteCode, input.targetId))) unknown.push('targetId')
        if (unknown.length > 0) throw new EdgeEndsUnknown(unknown)
      }
      await checkEnds()
      try {
        await writeNetwork(orgId, siteCode, async (trx) => {
          if (await findEdge(trx, orgId, siteCode, input)) throw new EdgeExists()
          await insertEdge(trx, row)
          await recordAudit(trx, clock, orgId, actor, {
            action: 'electrical.edge.created',
            target: `${siteCode}/${input.sourceId}->${input.targetId}`,
            detail: { edgeType: input.edgeType },
          })
        })
      } catch (err) {
        if (isUniqueViolation(err)) throw new EdgeExists()
        if (isForeignKeyViolation(err)) {
          await checkEnds()
          throw new NotFound()
        }
        throw err
      }
      return toEdge(row)
    },

    async deleteEdge(orgId: OrgId, actor: Actor, siteCode: string, query: DeleteEdgeQueryInput): Promise<void> {
      const key = { sourceId: query.source, targetId: query.target, edgeType: parseEdgeType(query.type) }
      await sites.require(orgId, siteCode)
      await writeNetwork(orgId, siteCode, async (trx) => {
        const result = await deleteEdge(trx, orgId, siteCode, key)
        if (Number(result.numDeletedRows) === 0) throw new NotFound()
        await recordAudit(trx, clock, orgId, actor, {
          action: 'electrical.edge.deleted',
          target: `${siteCode}/${key.sourceId}->${key.targetId}`,
          detail: { edgeType: key.edgeType },
        })
      })
    },

    async listEdges(orgId: OrgId, siteCode: string, query: ListEdgesQueryInput) {
      await sites.require(orgId, siteCode)
      const limit = query.limit ?? 500
      const after = decodeCursor(query.cursor, ['string', 'string', 'number']) as [string, string, number] | undefined
      const rows = await listEdges(db, orgId, siteCode, { limit, after, nodeId: query.nodeId })
      return toPage(rows, limit, toEdge, (r) => [r.source_id, r.target_id, r.edge_type])
    },

    /** The whole graph in one document, nodes by id and edges by (source, target, type). */
    async getNetwork(orgId: OrgId, siteCode: string) {
      await sites.require(orgId, siteCode)
      const nodes = (await allNodes(db, orgId, siteCode)).sort((a, b) => compareIds(a.id, b.id))
      const edges = (await allEdges(db, orgId, siteCode)).sort(compareEdges)
      return { siteId: siteCode, nodeCount: nodes.length, edgeCount: edges.length, nodes: nodes.map(toNode), edges: edges.map(toEdge) }
    },

    /**
     * Replaces the site's network atomically from a document streamed as it arrives (network-load.ts): each
     * element is checked and staged in short chunks, the whole graph is checked in SQL against the staged rows
     * (unique ids, known ends, no self-loop, no repeated triple: 422 listing each problem), then one transaction
     * replaces the network and drops the staging. Nodes whose id existed before keep their createdAt. Any
     * failure (bad element, broken JSON, a closed connection) leaves the network and no staging rows behind.
     */
    async replaceNetwork(orgId: OrgId, actor: Actor, siteCode: string, body: Readable) {
      await sites.require(orgId, siteCode)
      const loadId = randomUUID()
      const stagedAt = clock.now()
      await deleteStale(db, stagedAt - load.staleAfterMs, orgId) // loads of this organisation a crash left behind
      try {
        const count = await stageDocument(body, { orgId, siteCode, loadId, stagedAt, limits: load, write: (rows) => insertStaged(db, rows) })
        await db.transaction().execute(async (trx) => {
          // The staged rows have no planner statistics yet, and PostgreSQL may then walk a nested loop per staged edge
          // (30 000 nodes ran past the statement timeout); without nested loops it hashes every check, linear in the load.
          if (handle.dialect === 'postgres') await sql`set local enable_nestloop = off`.execute(trx)
          await checkStagedGraph(trx, orgId, loadId)
        })
        const now = clock.now()
        return await writeNetwork(orgId, siteCode, async (trx) => {
          if (!(await lockSite(trx, handle.dialect, orgId, siteCode))) throw new NotFound()
          // A whole-graph copy is bounded by SITEGRID_NETWORK_MAX_*, not by the per-statement timeout (as historian merges).
          if (handle.dialect === 'postgres') await sql`set local statement_timeout = 0`.execute(trx)
          const before = await countNodes(trx, orgId, siteCode)
          const kept = await keepCreatedAt(trx, orgId, siteCode, loadId)
          await deleteNetwork(trx, orgId, siteCode)
          await copyLoad(trx, orgId, siteCode, loadId, now)
          await deleteLoad(trx, orgId, loadId)
          const summary = {
            siteId: siteCode,
            nodeCount: count.nodes,
            edgeCount: count.edges,
            nodesAdded: count.nodes - kept,
            nodesRemoved: before - kept,
            nodesKept: kept,
          }
          await recordAudit(trx, clock, orgId, actor, { action: 'electrical.network.replaced', target: siteCode, detail: summary })
          return summary
        })
      } finally {
        // After a failure: nothing of the load stays (after success this finds nothing). If even this fails, the
        // age sweep (next load of the organisation, next start-up) removes the rows.
        await deleteLoad(db, orgId, loadId).catch(() => {})
      }
    },

    /**
     * Start-up recovery (every organisation: the caller runs it in the system scope): staging rows of loads a
     * stopped process left. SQLite: all of them (this process owns the file); PostgreSQL: those older than the
     * age bound, so live loads of other processes are left alone.
     */
    async recoverNetworkStaging(): Promise<number> {
      if (handle.dialect === 'sqlite') return deleteAllStaged(db)
      return deleteStale(db, clock.now() - load.staleAfterMs)
    },

    networkLoadLimits: load as NetworkLoadLimits,
  }
}
