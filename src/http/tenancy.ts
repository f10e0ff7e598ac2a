import type { Config } from '../config/schema.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import type { Org, OrgsService } from '../modules/orgs/service.ts'

/**
 * Host header → organisation. `{slug}.{base domain}` names the organisation. In site mode any other host
 * (an IP, `localhost`, the box's name) is the site's organisation: `SITEGRID_SITE_ORG`, or the only one.
 * Results are cached and dropped with the handle's invalidation generation (an org removal in any process).
 */
export function createTenancy(deps: { config: Config; orgs: OrgsService; handle: DatabaseHandle }) {
  const { config, orgs, handle } = deps
  const suffix = `.${config.baseDomain}`
  const cache = new Map<string, Org>()
  let cachedGeneration = handle.generation()

  async function lookup(slug: string): Promise<Org | undefined> {
    const generation = handle.generation()
    if (generation !== cachedGeneration) {
      cache.clear()
      cachedGeneration = generation
    }
    const hit = cache.get(slug)
    if (hit) return hit
    const org = await orgs.findBySlug(slug)
    if (org && handle.generation() === generation) cache.set(slug, org)
    return org
  }

  async function siteOrg(): Promise<Org | undefined> {
    if (config.siteOrgSlug) return lookup(config.siteOrgSlug)
    const all = await orgs.list()
    return all.length === 1 ? all[0] : undefined
  }

  return {
    /** The organisation a host serves, or undefined for an unknown host. */
    async resolve(hostname: string): Promise<Org | undefined> {
      const host = hostname.toLowerCase()
      if (host.endsWith(suffix)) {
        const slug = host.slice(0, -suffix.length)
        if (!slug.includes('.')) return lookup(slug)
      }
      return config.mode === 'site' ? siteOrg() : undefined
    },
  }
}

export type Tenancy = ReturnType<typeof createTenancy>
