import type { Actor } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { ControllersTable, Db } from '../../db/schema.ts'
import { invalidField, NotFound } from '../../errors/domain-error.ts'
import { decodeCursor, toPage } from '../../http/paging.ts'
import { newId, type OrgId } from '../../ids.ts'
import { insertAudited, recordAudit } from '../audit/service.ts'
import type { SiteDependent, SitesService } from '../sites/service.ts'
import { parseCipPath } from './cip-path.ts'
import { defaultPort, isCipProtocol, platformName } from './codes.ts'
import { isForeignKeyViolation, isUniqueViolation } from '../../db/constraint-errors.ts'
import { ControllerAssetNumberTaken, ControllerInUse } from './errors.ts'
import { isAddressOrHostName } from './host.ts'
import { pollBudget } from './poll-budget.ts'
import {
  CONTROLLER_DEFAULTS,
  type AssignControllerInput,
  type Controller,
  type CreateControllerInput,
  type ListControllersQueryInput,
  type UpdateControllerInput,
} from './schemas.ts'
import {
  countControllers,
  deleteController,
  findController,
  findControllerByAssetNumber,
  controllerInsert,
  listAllControllers,
  listControllerIds,
  listControllers,
  updateController,
  type ControllerChanges,
} from './store.ts'

export interface ControllerLoad {
  instances: number
  mappedTags: number
}

/** Instances bound to each controller and their mapped tags; supplied by the instances area. */
export type ControllerLoadSource = (db: Db, orgId: OrgId, siteCode: string, controllerIds: readonly string[]) => Promise<Map<string, ControllerLoad>>

/** `dryRun`: check and answer as the write would, writing nothing. */
export interface WriteOptions {
  dryRun?: boolean
}

const iso = (ms: number) => new Date(ms).toISOString()
export const NO_LOAD: ControllerLoad = { instances: 0, mappedTags: 0 }

/** The route of a CIP connection, or null; a malformed route is a 400 naming the hop. */
export function cipRouteOf(protocol: string, cipPath: string | null) {
  if (cipPath === null || !isCipProtocol(protocol)) return null
  const parsed = parseCipPath(cipPath)
  if (!parsed.ok) throw invalidField('/connection/cipPath', parsed.message)
  return { hops: parsed.hops, explanation: parsed.explanation }
}

export function checkAddress(ipAddress: string | undefined): void {
  if (ipAddress !== undefined && !isAddressOrHostName(ipAddress)) throw invalidField('/connection/ipAddress', 'must be an IPv4 or IPv6 address or a host name')
}

export function toController(row: ControllersTable, load: ControllerLoad): Controller {
  const cipRoute = cipRouteOrNull(row)
  return {
    id: row.id,
    siteId: row.site_code,
    name: row.name,
    platform: row.platform,
    platformName: platformName(row.platform),
    firmwareVersion: row.firmware_version,
    assetNumber: row.asset_number,
    connection: {
      protocol: row.protocol,
      ipAddress: row.ip_address,
      port: row.port,
      cipPath: row.cip_path,
      pollIntervalMs: row.poll_interval_ms,
      timeoutMs: row.timeout_ms,
      retryDelayMs: row.retry_delay_ms,
      maxRetries: row.max_retries,
    },
    cipRoute,
    edgeId: row.edge_id,
    edgePlcId: row.edge_plc_id,
    pollBudget: pollBudget({
      protocol: row.protocol,
      pollIntervalMs: row.poll_interval_ms,
      timeoutMs: row.timeout_ms,
      retryDelayMs: row.retry_delay_ms,
      maxRetries: row.max_retries,
      cipHops: cipRoute?.hops.length ?? 0,
      mappedTags: load.mappedTags,
      instances: load.instances,
    }),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  }
}

// Stored rows were checked when written; a read never fails on them.
function cipRouteOrNull(row: ControllersTable) {
  try {
    return cipRouteOf(row.protocol, row.cip_path)
  } catch {
    return null
  }
}

export const controllersSiteDependent: SiteDependent = { name: 'controllers', count: countControllers }

export function createControllersService(deps: { handle: DatabaseHandle; clock: Clock; sites: SitesService; load: ControllerLoadSource }) {
  const { clock, sites } = deps
  const db = deps.handle.db

  async function withLoad(orgId: OrgId, siteCode: string, row: ControllersTable): Promise<Controller> {
    const load = await deps.load(db, orgId, siteCode, [row.id])
    return toController(row, load.get(row.id) ?? NO_LOAD)
  }

  async function requireRow(orgId: OrgId, siteCode: string, id: string): Promise<ControllersTable> {
    await sites.require(orgId, siteCode)
    const row = await findController(db, orgId, siteCode, id)
    if (!row) throw new NotFound()
    return row
  }

  async function change(
    orgId: OrgId,
    actor: Actor,
    siteCode: string,
    id: string,
    action: string,
    changes: ControllerChanges,
    detail?: Record<string, unknown>,
  ) {
    await sites.require(orgId, siteCode)
    const row = await db.transaction().execute(async (trx) => {
      const result = await updateController(trx, orgId, siteCode, id, { ...changes, updated_at: clock.now() })
      if (Number(result.numUpdatedRows) === 0) throw new NotFound()
      await recordAudit(trx, clock, orgId, actor, { action, target: `${siteCode}/${id}`, detail })
      return (await findController(trx, orgId, siteCode, id))!
    })
    return withLoad(orgId, siteCode, row)
  }

  return {
    /**
     * Creates a controller in the site; 404 for a site not in the organisation, 409 for a duplicate asset number.
     * `dryRun`: the same checks, and the controller as it would be (a placeholder id), nothing written.
     */
    async create(orgId: OrgId, actor: Actor, siteCode: string, input: CreateControllerInput, options: WriteOptions = {}): Promise<Controller> {
      const c = input.connection
      const cipPath = c.cipPath ?? null
      try {
        checkAddress(c.ipAddress)
        cipRouteOf(c.protocol, cipPath)
      } catch (err) {
        // A site not in the organisation is the 404 before any complaint about the body.
        await sites.require(orgId, siteCode)
        throw err
      }
      const now = clock.now()
      const row: ControllersTable = {
        org_id: orgId,
        site_code: siteCode,
        id: newId('ctl', now),
        name: input.name,
        platform: input.platform,
        firmware_version: input.firmwareVersion ?? null,
        asset_number: input.assetNumber,
        protocol: c.protocol,
        ip_address: c.ipAddress,
        port: c.port ?? defaultPort(c.protocol),
        cip_path: cipPath,
        poll_interval_ms: c.pollIntervalMs ?? CONTROLLER_DEFAULTS.pollIntervalMs,
        timeout_ms: c.timeoutMs ?? CONTROLLER_DEFAULTS.timeoutMs,
        retry_delay_ms: c.retryDelayMs ?? CONTROLLER_DEFAULTS.retryDelayMs,
        max_retries: c.maxRetries ?? CONTROLLER_DEFAULTS.maxRetries,
        edge_id: null,
        edge_plc_id: null,
        created_at: now,
        updated_at: now,
      }
      if (options.dryRun) {
        await sites.require(orgId, siteCode)
        if (await findControllerByAssetNumber(db, orgId, siteCode, input.assetNumber)) throw new ControllerAssetNumberTaken(input.assetNumber)
        return toController(row, NO_LOAD)
      }
      // No read before the write (issue 29: two statements a request fewer): the foreign key to the site and the
      // unique (org_id, site_code, asset_number) index decide, also between concurrent requests.
      try {
        await insertAudited(
          deps.handle,
          clock,
          orgId,
          actor,
          { action: 'controller.created', target: `${siteCode}/${row.id}`, detail: { assetNumber: input.assetNumber } },
          controllerInsert(row),
        )
      } catch (err) {
        if (isUniqueViolation(err)) throw new ControllerAssetNumberTaken(input.assetNumber)
        // No such site in the organisation (or a concurrent delete removed it): the uniform 404.
        if (isForeignKeyViolation(err)) throw new NotFound()
        throw err
      }
      return toController(row, NO_LOAD)
    },

    async get(orgId: OrgId, siteCode: string, id: string): Promise<Controller> {
      return withLoad(orgId, siteCode, await requireRow(orgId, siteCode, id))
    },

    async list(orgId: OrgId, siteCode: string, query: ListControllersQueryInput) {
      await sites.require(orgId, siteCode)
      const limit = query.limit ?? 50
      const after = decodeCursor(query.cursor, ['string'])
      const rows = await listControllers(db, orgId, siteCode, { limit, after: after?.[0] as string | undefined, edgeId: query.edgeId })
      const load = await deps.load(
        db,
        orgId,
        siteCode,
        rows.slice(0, limit).map((r) => r.id),
      )
      return toPage(
        rows,
        limit,
        (r) => toController(r, load.get(r.id) ?? NO_LOAD),
        (r) => [r.id],
      )
    },

    /**
     * Spec 2.3: only the fields present change; a null clears a nullable field; `connection` merges field by field.
     * `dryRun`: the same checks, and the controller as it would be (with its instances' load), nothing written.
     */
    async update(orgId: OrgId, actor: Actor, siteCode: string, id: string, input: UpdateControllerInput, options: WriteOptions = {}): Promise<Controller> {
      const current = await requireRow(orgId, siteCode, id)
      const c = input.connection ?? {}
      checkAddress(c.ipAddress)
      cipRouteOf(c.protocol ?? current.protocol, c.cipPath === undefined ? current.cip_path : c.cipPath)
      const changes: ControllerChanges = {}
      if (input.name !== undefined) changes.name = input.name
      if (input.platform !== undefined) changes.platform = input.platform
      if (input.firmwareVersion !== undefined) changes.firmware_version = input.firmwareVersion
      if (c.protocol !== undefined) changes.protocol = c.protocol
      if (c.ipAddress !== undefined) changes.ip_address = c.ipAddress
      if (c.port !== undefined) changes.port = c.port
      if (c.cipPath !== undefined) changes.cip_path = c.cipPath
      if (c.pollIntervalMs !== undefined) changes.poll_interval_ms = c.pollIntervalMs
      if (c.timeoutMs !== undefined) changes.timeout_ms = c.timeoutMs
      if (c.retryDelayMs !== undefined) changes.retry_delay_ms = c.retryDelayMs
      if (c.maxRetries !== undefined) changes.max_retries = c.maxRetries
      if (options.dryRun) return withLoad(orgId, siteCode, { ...current, ...changes, updated_at: clock.now() })
      const fields = [...Object.keys(input).filter((k) => k !== 'connection'), ...Object.keys(c).map((k) => `connection.${k}`)]
      return change(orgId, actor, siteCode, id, 'controller.updated', changes, { fields })
    },

    /** Assigns the controller to an edge gateway; an empty edgeId removes the assignment. */
    async assign(orgId: OrgId, actor: Actor, siteCode: string, id: string, input: AssignControllerInput): Promise<Controller> {
      if (input.edgeId === '') return change(orgId, actor, siteCode, id, 'controller.unassigned', { edge_id: null, edge_plc_id: null })
      return change(
        orgId,
        actor,
        siteCode,
        id,
        'controller.assigned',
        { edge_id: input.edgeId, edge_plc_id: input.edgePlcId ?? null },
        { edgeId: input.edgeId },
      )
    },

    async unassign(orgId: OrgId, actor: Actor, siteCode: string, id: string): Promise<Controller> {
      return change(orgId, actor, siteCode, id, 'controller.unassigned', { edge_id: null, edge_plc_id: null })
    },

    /** Deletes a controller no instance references; 409 ControllerInUse otherwise. */
    async remove(orgId: OrgId, actor: Actor, siteCode: string, id: string): Promise<void> {
      await requireRow(orgId, siteCode, id)
      await db.transaction().execute(async (trx) => {
        const load = (await deps.load(trx, orgId, siteCode, [id])).get(id) ?? NO_LOAD
        if (load.instances > 0) throw new ControllerInUse(load.instances)
        try {
          const result = await deleteController(trx, orgId, siteCode, id)
          if (Number(result.numDeletedRows) === 0) throw new NotFound()
        } catch (err) {
          // The foreign key from instances refuses the delete when one was bound since the count above.
          if (isForeignKeyViolation(err)) throw new ControllerInUse(1)
          throw err
        }
        await recordAudit(trx, clock, orgId, actor, { action: 'controller.deleted', target: `${siteCode}/${id}` })
      })
    },

    /** Which of `ids` name a controller of this site (for the instances area). */
    async existingIds(orgId: OrgId, siteCode: string, ids: readonly string[]): Promise<Set<string>> {
      const unique = [...new Set(ids)]
      const found = new Set<string>()
      for (let i = 0; i < unique.length; i += 500) {
        for (const r of await listControllerIds(db, orgId, siteCode, unique.slice(i, i + 500))) found.add(r.id)
      }
      return found
    },

    /** A compact view of the site's controllers (AI grounding); 404 for a site not in the organisation. */
    async summary(orgId: OrgId, siteCode: string) {
      await sites.require(orgId, siteCode)
      const rows = await listAllControllers(db, orgId, siteCode)
      return rows.map((r) => ({
        id: r.id,
        name: r.name,
        assetNumber: r.asset_number,
        platform: platformName(r.platform),
        protocol: r.protocol,
        ipAddress: r.ip_address,
        cipPath: r.cip_path,
        edgeId: r.edge_id,
        pollIntervalMs: r.poll_interval_ms,
      }))
    },
  }
}

export type ControllersService = ReturnType<typeof createControllersService>
