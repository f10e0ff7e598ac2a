import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import { isForeignKeyViolation } from '../../../db/constraint-errors.ts'
import type { HistorianTagMarksTable } from '../../../db/schema.ts'
import { NotFound } from '../../../errors/domain-error.ts'
import { decodeCursor, toPage } from '../../../http/paging.ts'
import type { Actor } from '../../../identity.ts'
import type { OrgId } from '../../../ids.ts'
import { recordAudit } from '../../audit/service.ts'
import { TagKeyNotMapped } from '../errors.ts'
import { deleteTagMark, listTagMarks, saveTagMark, type Interpolation } from '../store/tag-marks-store.ts'

/** One instance of a site with its tag keys (instances/service.ts `get`: NotFound for an unknown site or instance). */
export interface InstanceLookup {
  get(orgId: OrgId, siteCode: string, id: string): Promise<{ tagMappings: Record<string, string> }>
}

export interface TagMarkDeps {
  handle: DatabaseHandle
  clock: Clock
  sites: { require(orgId: OrgId, code: string): Promise<{ code: string }> }
  instances: InstanceLookup
}

const iso = (ms: number) => new Date(ms).toISOString()

/** The API shape of a mark (schemas.ts TagMarkSchema). */
const toTagMark = (row: HistorianTagMarksTable) => ({
  instanceId: row.instance_id,
  tag: row.tag_key,
  // The API writes `step` or `linear`, and so must a package or the fleet link (row-rules.ts); a row stored before
  // that check holding anything else reads as the series reads take it: linear.
  interpolation: row.interpolation === 'step' ? ('step' as const) : ('linear' as const),
  updatedAt: iso(Number(row.updated_at)),
})

/**
 * GET/PUT/DELETE …/historian/tags: a tag's stored interpolation (`step` marks a discrete tag), which the series reads
 * use when the query names none (service/series.ts). A mark is set on a tag key of the instance's `tagMappings` only
 * (the rule live samples follow); deleting one (any key, mapped or no longer) puts the tag back to the default, linear.
 */
export function createTagMarkService(deps: TagMarkDeps) {
  const { handle, clock, sites, instances } = deps
  return {
    async list(orgId: OrgId, siteCode: string, page: { limit?: number; cursor?: string }) {
      const site = await sites.require(orgId, siteCode)
      const limit = page.limit ?? 100
      const after = decodeCursor(page.cursor, ['string', 'string']) as readonly [string, string] | undefined
      const rows = await listTagMarks(handle.db, orgId, site.code, { limit, after })
      return toPage(rows, limit, toTagMark, (r) => [r.instance_id, r.tag_key])
    },

    async set(orgId: OrgId, actor: Actor, siteCode: string, instanceId: string, tagKey: string, interpolation: Interpolation) {
      const instance = await instances.get(orgId, siteCode, instanceId)
      if (!Object.hasOwn(instance.tagMappings, tagKey)) throw new TagKeyNotMapped(instanceId, tagKey)
      const row: HistorianTagMarksTable = {
        org_id: orgId,
        site_code: siteCode,
        instance_id: instanceId,
        tag_key: tagKey,
        interpolation,
        updated_at: clock.now(),
      }
      try {
        await handle.db.transaction().execute(async (trx) => {
          await saveTagMark(trx, row)
          await recordAudit(trx, clock, orgId, actor, {
            action: 'historian.tag.marked',
            target: `${siteCode}/${instanceId}`,
            detail: { tag: tagKey, interpolation },
          })
        })
      } catch (err) {
        // The instance was deleted since it was read: the uniform 404.
        if (isForeignKeyViolation(err)) throw new NotFound()
        throw err
      }
      return toTagMark(row)
    },

    async remove(orgId: OrgId, actor: Actor, siteCode: string, instanceId: string, tagKey: string): Promise<void> {
      await instances.get(orgId, siteCode, instanceId)
      await handle.db.transaction().execute(async (trx) => {
        if (await deleteTagMark(trx, orgId, siteCode, instanceId, tagKey))
          await recordAudit(trx, clock, orgId, actor, { action: 'historian.tag.unmarked', target: `${siteCode}/${instanceId}`, detail: { tag: tagKey } })
      })
    },
  }
}
