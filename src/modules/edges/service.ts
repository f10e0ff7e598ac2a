import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import { NotFound } from '../../errors/domain-error.ts'
import type { OrgId } from '../../ids.ts'
import type { AlarmsService } from '../alarms/service.ts'
import type { ControllersService } from '../controllers/service.ts'
import type { InstancesService } from '../instances/service.ts'
import type { SitesService } from '../sites/service.ts'
import type { EdgeConfig } from './schemas.ts'
import { createEdgeStatus, listAssigned } from './status.ts'
import { findConfigVersion } from './store.ts'

export interface EdgesDeps {
  handle: DatabaseHandle
  clock: Clock
  sites: Pick<SitesService, 'require'>
  controllers: Pick<ControllersService, 'list' | 'get'>
  instances: Pick<InstancesService, 'listTagMappings'>
  alarms: Pick<AlarmsService, 'raiseSystemEvents'>
  /** SITEGRID_EDGE_STALE_AFTER_MS */
  staleAfterMs: number
  /** SITEGRID_EDGE_STATUS_QUEUE_MAX */
  maxWaitingTurns?: number
}

export function createEdgesService(deps: EdgesDeps) {
  const db = deps.handle.db

  /** The site's configuration version: one primary-key read; an unknown or foreign site is NotFound. */
  async function configVersion(orgId: OrgId, siteCode: string): Promise<number> {
    const version = await findConfigVersion(db, orgId, siteCode)
    if (version !== undefined) return version
    await deps.sites.require(orgId, siteCode) // no row: a site whose equipment never changed, or no site
    return 0
  }

  return {
    configVersion,
    ...createEdgeStatus({ ...deps, configVersion }),

    /**
     * What the gateway polls. The version is read before the configuration: a change committed meanwhile is in the
     * answer or not, but it moved the version, so the next poll fetches again and none is missed. An edge exists through
     * its controllers: one with none assigned (or of another organisation) is the uniform NotFound, as an unknown site.
     */
    async config(orgId: OrgId, siteCode: string, edgeId: string): Promise<EdgeConfig> {
      const version = await configVersion(orgId, siteCode)
      const controllers = await listAssigned(deps.controllers, orgId, siteCode, edgeId)
      if (controllers.length === 0) throw new NotFound()
      const byController = new Map<string, EdgeConfig['controllers'][number]['instances']>()
      for (const m of await deps.instances.listTagMappings(
        orgId,
        siteCode,
        controllers.map((c) => c.id),
      )) {
        // An instance without mappings gives its gateway nothing to poll.
        if (Object.keys(m.tagMappings).length === 0) continue
        const list = byController.get(m.controllerId) ?? []
        list.push({ id: m.instanceId, tagMappings: m.tagMappings })
        byController.set(m.controllerId, list)
      }
      return {
        siteId: siteCode,
        edgeId,
        version,
        controllers: controllers.map((c) => ({
          id: c.id,
          name: c.name,
          platform: c.platform,
          platformName: c.platformName,
          edgePlcId: c.edgePlcId,
          connection: c.connection,
          cipRoute: c.cipRoute,
          instances: byController.get(c.id) ?? [],
        })),
      }
    },
  }
}

export type EdgesService = ReturnType<typeof createEdgesService>
