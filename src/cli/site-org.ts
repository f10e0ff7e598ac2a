import { siteOrgAmbiguity } from '../config/site-org.ts'
import type { Config } from '../config/schema.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import { withSystemScope } from '../db/tenant-scope.ts'
import { createOrgsService } from '../modules/orgs/service.ts'
import { systemClock } from '../clock.ts'

/** config/site-org.ts on the stored organisations (for `serve`'s start). */
export async function siteOrgAmbiguityOf(config: Config, handle: DatabaseHandle): Promise<string | undefined> {
  if (config.mode !== 'site' || config.siteOrgSlug) return undefined
  const orgs = await withSystemScope(() => createOrgsService({ handle, clock: systemClock }).list())
  return siteOrgAmbiguity(
    config,
    orgs.map((o) => o.slug),
  )
}
