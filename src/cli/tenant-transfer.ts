import { systemClock } from '../clock.ts'
import type { Config } from '../config/schema.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import { historianStoredParts } from '../modules/historian/transfer.ts'
import { createSitesService, type SitesService } from '../modules/sites/service.ts'
import { createTenantTransferService } from '../modules/tenant-transfer/service.ts'

/**
 * The tenant transfer as `serve` builds it (app.ts), with the historian's samples part plugged in: the one builder of
 * the commands that export, import or seed (`sitegrid tenant …`, `sitegrid link …`). `sites` is the caller's own
 * sites service when it uses one too.
 */
export function cliTenantTransfer(
  config: Config,
  handle: DatabaseHandle,
  sites: SitesService = createSitesService({ handle, clock: systemClock, dependents: [] }),
) {
  return createTenantTransferService({
    handle,
    clock: systemClock,
    mode: config.mode,
    sites,
    storedParts: historianStoredParts,
    maxPackageBytes: config.tenantPackageMaxBytes,
    maxInflatedBytes: config.tenantPackageMaxInflatedBytes,
  })
}
