import type { Config } from '../config/schema.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import { enterRequestOrgScope, withSystemScope } from '../db/tenant-scope.ts'
import type { DomainsService } from '../modules/orgs/domains-service.ts'
import type { Org, OrgsService } from '../modules/orgs/service.ts'

const MAX_HOST_LENGTH = 253
const MAX_CACHED_HOSTS = 10_000

type HostBinding = { readonly org: Org | undefined }
const UNBOUND: HostBinding = Object.freeze({ org: undefined })
const DISABLED: HostBinding = Object.freeze({ org: undefined })

/**
 * Host header → organisation. `{slug}.{base domain}` names the organisation; any other host is looked up
 * among the custom domain bindings: an enabled one serves its organisation exactly as the subdomain does, a
 * disabled one is an unknown host. In site mode any other unbound host (an IP, `localhost`, the box's name) is
 * the site's organisation: `SITEGRID_SITE_ORG`, or the only one.
 * Results are cached and dropped with the handle's invalidation generation (an org removal or a binding
 * change in any process).
 */
export function createTenancy(deps: { config: Config; orgs: OrgsService; handle: DatabaseHandle; domains?: Pick<DomainsService, 'findByHost'> }) {
  const { config, orgs, handle, domains } = deps
  const suffix = `.${config.baseDomain}`
  const cache = new Map<string, Org>()
  // Custom hosts, bound or not. Bounded: the Host header is the caller's choice.
  const hosts = new Map<string, HostBinding>()
  let cachedGeneration = handle.generation()

  function dropIfStale(): number {
    const generation = handle.generation()
    if (generation !== cachedGeneration) {
      cache.clear()
      hosts.clear()
      cachedGeneration = generation
    }
    return generation
  }

  async function lookup(slug: string): Promise<Org | undefined> {
    const generation = dropIfStale()
    const hit = cache.get(slug)
    if (hit) return hit
    const org = await orgs.findBySlug(slug)
    if (org && handle.generation() === generation) cache.set(slug, org)
    return org
  }

  /** What a custom host is: an enabled binding's organisation, a disabled binding, or unbound. */
  async function lookupHost(host: string): Promise<HostBinding> {
    const generation = dropIfStale()
    const hit = hosts.get(host)
    if (hit) return hit
    const found = await domains!.findByHost(host)
    const result: HostBinding = found === undefined ? UNBOUND : found.isEnabled ? { org: found.org } : DISABLED
    if (handle.generation() === generation) {
      if (hosts.size >= MAX_CACHED_HOSTS) hosts.clear()
      hosts.set(host, result)
    }
    return result
  }

  async function siteOrg(): Promise<Org | undefined> {
    if (config.siteOrgSlug) return lookup(config.siteOrgSlug)
    const all = await orgs.list()
    return all.length === 1 ? all[0] : undefined
  }

  async function resolveHost(host: string): Promise<Org | undefined> {
    if (host.endsWith(suffix)) {
      const slug = host.slice(0, -suffix.length)
      if (!slug.includes('.')) return lookup(slug)
    }
    const bound = domains && host.length <= MAX_HOST_LENGTH ? await lookupHost(host) : UNBOUND
    if (bound !== UNBOUND) return bound.org // a disabled binding is an unknown host, in site mode too
    return config.mode === 'site' ? siteOrg() : undefined
  }

  return {
    /**
     * The organisation a host serves, or undefined for an unknown host. Row-level security: the lookup crosses
     * organisations (a host or slug names any of them), so it runs in the system scope; the request that asked
     * then runs in the organisation's scope (db/tenant-scope.ts), whether its route is public or not.
     */
    async resolve(hostname: string): Promise<Org | undefined> {
      const org = await withSystemScope(() => resolveHost(hostname.toLowerCase()))
      if (org) enterRequestOrgScope(org.id)
      return org
    },
  }
}

export type Tenancy = ReturnType<typeof createTenancy>
