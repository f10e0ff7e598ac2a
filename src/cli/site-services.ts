import { systemClock } from '../clock.ts'
import type { Config } from '../config/schema.ts'
import type { DatabaseHandle } from '../db/connect.ts'

/**
 * The sites and historian services as `serve` builds them (app.ts): the same deletion preview (every area's
 * dependents), the same refusal of a linked site's deletion, the same instance check of a historian mapping.
 * Loaded on use, so that `sitegrid --help` loads none of it (src/cli/build.ts).
 */
export async function cliSiteServices(config: Config, handle: DatabaseHandle) {
  const [sitesModule, controllersModule, instancesModule, electricalModule, alarmsModule, historianModule, linkedHere, fleetCommands] = await Promise.all([
    import('../modules/sites/service.ts'),
    import('../modules/controllers/service.ts'),
    import('../modules/instances/service.ts'),
    import('../modules/electrical/service.ts'),
    import('../modules/alarms/service.ts'),
    import('../modules/historian/service/index.ts'),
    import('../modules/fleet/linked-sites.ts'),
    import('../modules/fleet/commands/service.ts'),
  ])
  const clock = systemClock
  const linked =
    config.mode === 'cloud'
      ? { side: 'cloud' as const, isLinked: fleetCommands.linkedSites.isLinked }
      : { side: 'site' as const, isLinked: linkedHere.isLinkedHere }
  const dependents = [
    controllersModule.controllersSiteDependent,
    instancesModule.instancesSiteDependent,
    ...electricalModule.electricalSiteDependents,
    alarmsModule.alarmsSiteDependent,
    ...historianModule.historianSiteDependents,
  ]
  const sites = sitesModule.createSitesService({ handle, clock, dependents, linked })
  const controllers = controllersModule.createControllersService({
    handle,
    clock,
    sites,
    load: (db, orgId, site, ids) => instances.controllerLoad(db, orgId, site, ids),
  })
  const instances = instancesModule.createInstancesService({ handle, clock, sites, controllers })
  const historian = historianModule.createHistorianService({ handle, clock, sites, instances, maxFileBytes: config.historianMaxFileBytes })
  return { sites, historian }
}
