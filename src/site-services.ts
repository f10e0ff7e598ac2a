// The services of a site's records, apart from the HTTP application (app.ts) so that a CLI command that needs them
// (cli/site.ts, cli/historian.ts) loads no fastify and no routes, and both wire them the same way: the deletion
// preview of every area, the refusal of a linked site's deletion, the instance check of a historian mapping.
import type { Clock } from './clock.ts'
import type { Config } from './config/schema.ts'
import type { DatabaseHandle } from './db/connect.ts'
import type { TransferMeter } from './http/transfer-meter.ts'
import { alarmsSiteDependent } from './modules/alarms/service.ts'
import { apiKeysSiteDependent } from './modules/api-keys/service.ts'
import { controllersSiteDependent, createControllersService } from './modules/controllers/service.ts'
import { electricalSiteDependents } from './modules/electrical/service.ts'
import { linkedSites } from './modules/fleet/commands/service.ts'
import { isLinkedHere } from './modules/fleet/linked-sites.ts'
import { createHistorianService, historianSiteDependents } from './modules/historian/service/index.ts'
import { createInstancesService, instancesSiteDependent } from './modules/instances/service.ts'
import { createSitesService, type SiteDependent } from './modules/sites/service.ts'

/** What each site-scoped area owns under a site, for the deletion preview (DELETE /api/sites/{code}). */
const SITE_DEPENDENTS: readonly SiteDependent[] = [
  controllersSiteDependent,
  instancesSiteDependent,
  ...electricalSiteDependents,
  alarmsSiteDependent,
  ...historianSiteDependents,
  apiKeysSiteDependent,
]

/** Sites, controllers, instances and the historian, built for buildApp (app.ts) and for the CLI's site commands. */
export function createSiteServices(deps: { config: Config; handle: DatabaseHandle; clock: Clock; historianMeter?: TransferMeter }) {
  const { config, handle, clock } = deps
  // Fleet link: a linked site is deleted on neither side (its data lives on both; sites/service.ts).
  const linked = config.mode === 'cloud' ? { side: 'cloud' as const, isLinked: linkedSites.isLinked } : { side: 'site' as const, isLinked: isLinkedHere }
  const sites = createSitesService({ handle, clock, dependents: SITE_DEPENDENTS, linked })
  // Each needs the other: instances check their controller, a controller's poll budget counts its instances' tags.
  const controllers = createControllersService({ handle, clock, sites, load: (db, orgId, site, ids) => instances.controllerLoad(db, orgId, site, ids) })
  const instances = createInstancesService({ handle, clock, sites, controllers })
  const historian = createHistorianService({ handle, clock, sites, instances, maxFileBytes: config.historianMaxFileBytes, meter: deps.historianMeter })
  return { sites, controllers, instances, historian }
}
