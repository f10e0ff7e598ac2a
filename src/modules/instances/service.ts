import type { Actor } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'
import { NotFound } from '../../errors/domain-error.ts'
import { decodeCursor, toPage } from '../../http/paging.ts'
import type { OrgId } from '../../ids.ts'
import { recordAudit } from '../audit/service.ts'
import { isForeignKeyViolation, isUniqueViolation } from '../../db/constraint-errors.ts'
import type { ControllerLoad, ControllersService } from '../controllers/service.ts'
import type { SiteDependent, SitesService } from '../sites/service.ts'
import { createItemValidator, planBulk, type BulkItem } from './bulk.ts'
import { sizeProblems } from './checks.ts'
import { BulkRefused, BulkSiteKeptChanging, InstanceIdTaken, InstanceOverLimits, UnknownController } from './errors.ts'
import { canonicalJson } from './limits.ts'
import { rowOf, toInstance } from './rows.ts'
import type { BulkReport, CreateInstanceInput, Instance, ListInstancesQueryInput, UpdateInstanceInput } from './schemas.ts'
import {
  countInstances,
  deleteInstance,
  findInstance,
  findInstances,
  insertInstance,
  insertInstances,
  listInstances,
  listTagMappingRows,
  loadByController,
  updateInstance,
  type InstanceChanges,
} from './store.ts'

function checkSizes(input: { tagMappings?: Record<string, string>; config?: Record<string, unknown> }): void {
  const problems = sizeProblems(input)
  if (problems.length > 0) {
    throw new InstanceOverLimits(problems)
  }
}

export const instancesSiteDependent: SiteDependent = { name: 'instances', count: countInstances }

/** Plans of one bulk request, each on what the writer that beat the previous one left. */
const BULK_ATTEMPTS = 5

export function createInstancesService(deps: {
  handle: DatabaseHandle
  clock: Clock
  sites: SitesService
  controllers: Pick<ControllersService, 'existingIds'>
}) {
  const { clock, sites, controllers } = deps
  const db = deps.handle.db
  const validate = createItemValidator()

  async function requireController(orgId: OrgId, siteCode: string, controllerId: string): Promise<void> {
    if (!(await controllers.existingIds(orgId, siteCode, [controllerId])).has(controllerId)) throw new UnknownController(controllerId)
  }

  return {
    /** Creates an instance; 409 for a taken id, 422 for a controllerId not of this site. */
    async create(orgId: OrgId, actor: Actor, siteCode: string, input: CreateInstanceInput): Promise<Instance> {
      await sites.require(orgId, siteCode)
      checkSizes(input)
      await requireController(orgId, siteCode, input.controllerId)
      const row = rowOf(orgId, siteCode, input, clock.now())
      await db.transaction().execute(async (trx) => {
        if (await findInstance(trx, orgId, siteCode, input.id)) throw new InstanceIdTaken(input.id)
        try {
          await insertInstance(trx, row)
        } catch (err) {
          if (isUniqueViolation(err)) throw new InstanceIdTaken(input.id)
          // The controller was deleted since the check above.
          if (isForeignKeyViolation(err)) throw new UnknownController(input.controllerId)
          throw err
        }
        await recordAudit(trx, clock, orgId, actor, { action: 'instance.created', target: `${siteCode}/${input.id}` })
      })
      return toInstance(row)
    },

    async get(orgId: OrgId, siteCode: string, id: string): Promise<Instance> {
      await sites.require(orgId, siteCode)
      const row = await findInstance(db, orgId, siteCode, id)
      if (!row) throw new NotFound()
      return toInstance(row)
    },

    async list(orgId: OrgId, siteCode: string, query: ListInstancesQueryInput) {
      await sites.require(orgId, siteCode)
      const limit = query.limit ?? 100
      const after = decodeCursor(query.cursor, ['string'])
      const rows = await listInstances(db, orgId, siteCode, {
        limit,
        after: after?.[0] as string | undefined,
        controllerId: query.controllerId,
        area: query.area,
        typeId: query.typeId,
      })
      return toPage(rows, limit, toInstance, (r) => [r.id])
    },

    /** Only the fields present change; a null clears typeVersion or area; tagMappings and config are replaced whole. */
    async update(orgId: OrgId, actor: Actor, siteCode: string, id: string, input: UpdateInstanceInput): Promise<Instance> {
      await sites.require(orgId, siteCode)
      if (!(await findInstance(db, orgId, siteCode, id))) throw new NotFound()
      checkSizes(input)
      if (input.controllerId !== undefined) await requireController(orgId, siteCode, input.controllerId)
      const changes: InstanceChanges = { updated_at: clock.now() }
      if (input.name !== undefined) changes.name = input.name
      if (input.typeId !== undefined) changes.type_id = input.typeId
      if (input.typeVersion !== undefined) changes.type_version = input.typeVersion
      if (input.assetNumber !== undefined) changes.asset_number = input.assetNumber
      if (input.controllerId !== undefined) changes.controller_id = input.controllerId
      if (input.area !== undefined) changes.area = input.area
      if (input.tagMappings !== undefined) {
        changes.tag_mappings = canonicalJson(input.tagMappings)
        changes.tag_count = Object.keys(input.tagMappings).length
      }
      if (input.config !== undefined) changes.config = canonicalJson(input.config)
      return db.transaction().execute(async (trx) => {
        try {
          const result = await updateInstance(trx, orgId, siteCode, id, changes)
          if (Number(result.numUpdatedRows) === 0) throw new NotFound()
        } catch (err) {
          if (isForeignKeyViolation(err) && input.controllerId !== undefined) throw new UnknownController(input.controllerId)
          throw err
        }
        await recordAudit(trx, clock, orgId, actor, { action: 'instance.updated', target: `${siteCode}/${id}`, detail: { fields: Object.keys(input) } })
        return toInstance((await findInstance(trx, orgId, siteCode, id))!)
      })
    },

    async remove(orgId: OrgId, actor: Actor, siteCode: string, id: string): Promise<void> {
      await sites.require(orgId, siteCode)
      await db.transaction().execute(async (trx) => {
        const result = await deleteInstance(trx, orgId, siteCode, id)
        if (Number(result.numDeletedRows) === 0) throw new NotFound()
        await recordAudit(trx, clock, orgId, actor, { action: 'instance.deleted', target: `${siteCode}/${id}` })
      })
    },

    /**
     * Creates or replaces many instances: with `dryRun` only the report; otherwise all or nothing
     * (422 BulkRefused with the report when a line is refused). A line naming an existing id replaces it whole.
     * A concurrent writer that created one of the ids (or deleted a controller) between the plan and the write makes it
     * plan again on what that writer left (the id is then replaced or unchanged); Conflict only if that keeps happening.
     */
    async bulk(orgId: OrgId, actor: Actor, siteCode: string, items: BulkItem[], dryRun: boolean): Promise<BulkReport> {
      await sites.require(orgId, siteCode)
      const ids = [...new Set(items.flatMap((i) => (typeof i.id === 'string' ? [i.id] : [])))]
      const controllerIds = items.flatMap((i) => {
        const v = i.value as { controllerId?: unknown } | null
        return v !== null && typeof v === 'object' && typeof v.controllerId === 'string' ? [v.controllerId] : []
      })
      for (let attempt = 1; ; attempt++) {
        const plan = planBulk(orgId, siteCode, items, {
          now: clock.now(),
          existing: new Map((await findInstances(db, orgId, siteCode, ids)).map((r) => [r.id, r])),
          controllers: await controllers.existingIds(orgId, siteCode, controllerIds),
          validate,
        })
        const report: BulkReport = { dryRun, ...plan.report }
        if (dryRun) return report
        if (report.refused > 0) throw new BulkRefused(report, plan.errors)
        try {
          await db.transaction().execute(async (trx) => {
            await insertInstances(trx, plan.inserts)
            for (const row of plan.updates) {
              const { org_id: _o, site_code: _s, id: _i, created_at: _c, ...changes } = row
              await updateInstance(trx, orgId, siteCode, row.id, changes)
            }
            await recordAudit(trx, clock, orgId, actor, {
              action: 'instance.bulk',
              target: siteCode,
              detail: { created: report.created, updated: report.updated, unchanged: report.unchanged },
            })
          })
          return report
        } catch (err) {
          // Another writer got in between the plan and the write; nothing was written.
          if (!(isUniqueViolation(err) || isForeignKeyViolation(err))) throw err
          if (attempt >= BULK_ATTEMPTS) throw new BulkSiteKeptChanging()
        }
      }
    },

    /** Which of `ids` name an instance of this site (alarms, historian import). */
    async existingIds(orgId: OrgId, siteCode: string, ids: string[]): Promise<Set<string>> {
      return new Set((await findInstances(db, orgId, siteCode, [...new Set(ids)])).map((r) => r.id))
    },

    /**
     * Every instance's tag mappings in the site, ordered by instance id (historian import, alarms), or only those of the
     * instances of `controllerIds` (an edge's configuration: a site's other instances are not read).
     */
    async listTagMappings(
      orgId: OrgId,
      siteCode: string,
      controllerIds?: readonly string[],
    ): Promise<Array<{ instanceId: string; controllerId: string; tagMappings: Record<string, string> }>> {
      const rows = await listTagMappingRows(db, orgId, siteCode, controllerIds)
      return rows.map((r) => ({ instanceId: r.id, controllerId: r.controller_id, tagMappings: JSON.parse(r.tag_mappings) as Record<string, string> }))
    },

    /** Instances and mapped tags per controller (the controllers' poll budget). */
    async controllerLoad(executor: Db, orgId: OrgId, siteCode: string, controllerIds: readonly string[]): Promise<Map<string, ControllerLoad>> {
      const rows = await loadByController(executor, orgId, siteCode, controllerIds)
      return new Map(rows.map((r) => [r.controller_id, { instances: r.instances, mappedTags: r.tags }]))
    },
  }
}

export type InstancesService = ReturnType<typeof createInstancesService>
