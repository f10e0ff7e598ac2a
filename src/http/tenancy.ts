import type { FastifyInstance } from 'fastify'
import type { Config } from '../config/schema.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import { enterRequestOrgScope, withSystemScope } from '../db/tenant-scope.ts'
import { invalidField } from '../errors/domain-error.ts'
import type { Org } from '../identity.ts'

/** The organisations by slug (the orgs module's service satisfies it; app.ts passes it in). */
export interface OrgDirectory {
  /** The organisation a slug's host serves: none while an operator has it suspended. */
  findServedBySlug(slug: string): Promise<Org | undefined>
  list(): Promise<Org[]>
}

/** The custom domain bindings (the orgs module's domains service satisfies it); a suspended organisation's are disabled. */
export interface HostBindings {
  findByHost(host: string): Promise<{ org: Org; isEnabled: boolean } | undefined>
}

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
export function createTenancy(deps: { config: Config; orgs: OrgDirectory; handle: DatabaseHandle; domains?: HostBindings }) {
  const { config, orgs, handle, domains } = deps
  const suffix = `.${config.baseDomain}`
  const cache = new Map<string, Org>()
  // Custom hosts, bound or not. Bounded: the Host header is the caller's choice.
  const hosts = new Map<string, HostBinding>()
  let cachedGeneration = handle.generation()

  function dropIfStale(generation: number): number {
    if (generation !== cachedGeneration) {
      cache.clear()
      hosts.clear()
      cachedGeneration = generation
    }
    return generation
  }

  /** A remembered organisation at once; a promise only for a database lookup (issue 29: none on the hot path). */
  function lookup(slug: string, seen: number): Org | undefined | Promise<Org | undefined> {
    const generation = dropIfStale(seen)
    return cache.get(slug) ?? findSlug(slug, generation)
  }

  async function findSlug(slug: string, generation: number): Promise<Org | undefined> {
    const org = await withSystemScope(() => orgs.findServedBySlug(slug))
    if (org && handle.generation() === generation) cache.set(slug, org)
    return org
  }

  /** What a custom host is: an enabled binding's organisation, a disabled binding, or unbound. */
  function lookupHost(host: string, seen: number): HostBinding | Promise<HostBinding> {
    const generation = dropIfStale(seen)
    return hosts.get(host) ?? findHost(host, generation)
  }

  async function findHost(host: string, generation: number): Promise<HostBinding> {
    const found = await withSystemScope(() => domains!.findByHost(host))
    const result: HostBinding = found === undefined ? UNBOUND : found.isEnabled ? { org: found.org } : DISABLED
    if (handle.generation() === generation) {
      if (hosts.size >= MAX_CACHED_HOSTS) hosts.clear()
      hosts.set(host, result)
    }
    return result
  }

  async function siteOrg(seen: number): Promise<Org | undefined> {
    if (config.siteOrgSlug) return lookup(config.siteOrgSlug, seen)
    const all = await withSystemScope(() => orgs.list())
    return all.length === 1 ? all[0] : undefined
  }

  function resolveHost(host: string, seen: number): Org | undefined | Promise<Org | undefined> {
    if (host.endsWith(suffix)) {
      const slug = host.slice(0, -suffix.length)
      if (!slug.includes('.')) return lookup(slug, seen)
    }
    if (!domains || host.length > MAX_HOST_LENGTH) return unboundHost(seen)
    const bound = lookupHost(host, seen)
    return bound instanceof Promise ? bound.then((b) => boundOrg(b, seen)) : boundOrg(bound, seen)
  }

  /** A disabled binding is an unknown host, in site mode too; an unbound host is the site's organisation there. */
  function boundOrg(bound: HostBinding, seen: number): Org | undefined | Promise<Org | undefined> {
    return bound === UNBOUND ? unboundHost(seen) : bound.org
  }

  function unboundHost(seen: number): Org | undefined | Promise<Org | undefined> {
    return config.mode === 'site' ? siteOrg(seen) : undefined
  }

  return {
    /**
     * The organisation a host serves, or undefined for an unknown host. Row-level security: a lookup crosses
     * organisations (a host or slug names any of them), so the queries above run in the system scope — only on a
     * cache miss, the hot path enters no scope of its own; the request that asked then runs in the organisation's
     * scope (db/tenant-scope.ts), whether its route is public or not.
     * `generation`: the handle's invalidation generation as the request read it (http/auth.ts reads it once for
     * both the tenancy and the key caches: each read is a database call on SQLite).
     */
    resolve(hostname: string, generation = handle.generation()): Org | undefined | Promise<Org | undefined> {
      const org = resolveHost(canonicalHost(hostname), generation)
      return org instanceof Promise ? org.then(enterScope) : enterScope(org)
    },
  }
}

/**
 * One spelling per host name: DNS names are case-insensitive, and a fully qualified name's trailing dot
 * (`acme.example.com.`) names the same host as without it, so neither selects another organisation or slips past a
 * disabled binding.
 */
function canonicalHost(hostname: string): string {
  const lower = hostname.toLowerCase()
  return lower.endsWith('.') ? lower.slice(0, -1) : lower
}

export const ONE_HOST_RULE = 'must appear once (RFC 9112 §3.2)'

/**
 * The Host the tenancy reads is the one the request names, whatever a proxy in front of the server would read:
 * - RFC 9112 §3.2: a request with more than one Host header is a 400 (a front proxy may route by the last one, Node
 *   keeps the first), naming the header;
 * - RFC 9112 §3.2.2: an absolute-form target (`GET http://other.example/api/… HTTP/1.1`) names the host, and the Host
 *   header is ignored; it is replaced by the target's authority, so every reader of the host (the tenancy, the
 *   sign-in's origin, the log) sees the one the target names.
 * Installed before the auth selector, for every route.
 */
export function installHostRules(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const raw = request.raw
    if (hostHeaderCount(raw.rawHeaders) > 1) return done(invalidField('/host', ONE_HOST_RULE, 'headers'))
    const target = raw.url ?? ''
    if (target.charCodeAt(0) !== 47 /* / */ && ABSOLUTE_FORM.test(target)) {
      const authority = authorityOf(target)
      if (authority === undefined) return done(invalidField('', ABSOLUTE_FORM_RULE, 'params'))
      raw.headers.host = authority
    }
    done()
  })
}

const ABSOLUTE_FORM = /^https?:\/\//i
export const ABSOLUTE_FORM_RULE = 'an absolute-form request target must name a valid host'

function authorityOf(target: string): string | undefined {
  try {
    return new URL(target).host || undefined
  } catch {
    return undefined
  }
}

function hostHeaderCount(rawHeaders: string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    if (name.length === 4 && name.toLowerCase() === 'host') count++
  }
  return count
}

function enterScope(org: Org | undefined): Org | undefined {
  if (org) enterRequestOrgScope(org.id)
  return org
}

export type Tenancy = ReturnType<typeof createTenancy>
