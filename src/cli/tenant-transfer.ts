import { systemClock } from '../clock.ts'
import type { Config } from '../config/schema.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import type { SitesService } from '../modules/sites/service.ts'

/**
 * The tenant transfer as `serve` builds it (app.ts), with the historian's samples part plugged in: the one builder of
 * the commands that export, import or seed (`sitegrid tenant …`, `sitegrid link …`). `sites` is the caller's own
 * sites service when it uses one too. Loaded on use, so that `sitegrid --help` loads none of it (src/cli/build.ts).
 */
export async function cliTenantTransfer(config: Config, handle: DatabaseHandle, sites?: SitesService) {
  const [{ historianStoredParts }, { createSitesService }, { createTenantTransferService }] = await Promise.all([
    import('../modules/historian/transfer.ts'),
    import('../modules/sites/service.ts'),
    import('../modules/tenant-transfer/service.ts'),
  ])
  return createTenantTransferService({
    handle,
    clock: systemClock,
    mode: config.mode,
    baseDomain: config.baseDomain,
    sites: sites ?? createSitesService({ handle, clock: systemClock, dependents: [] }),
    storedParts: historianStoredParts,
    maxPackageBytes: config.tenantPackageMaxBytes,
    maxInflatedBytes: config.tenantPackageMaxInflatedBytes,
  })
}
