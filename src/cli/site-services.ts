import { systemClock } from '../clock.ts'
import type { Config } from '../config/schema.ts'
import type { DatabaseHandle } from '../db/connect.ts'

/**
 * The sites and historian services as `serve` builds them (site-services.ts, shared with app.ts). Loaded on use, so
 * that `sitegrid --help` loads none of it (src/cli/build.ts).
 */
export async function cliSiteServices(config: Config, handle: DatabaseHandle) {
  const { createSiteServices } = await import('../site-services.ts')
  return createSiteServices({ config, handle, clock: systemClock })
}
