import type { Config } from './schema.ts'

/**
 * A site server answers hosts that are not `{slug}.{base domain}` (its IP, `localhost`) as its organisation:
 * SITEGRID_SITE_ORG, or the only one stored (http/tenancy.ts). With several stored and none named, such a host
 * serves no organisation and every request there gets the uniform 401: this says so, for `org create`, the start
 * and `/readyz`. Undefined when the server is not ambiguous (a cloud cell never is).
 */
export function siteOrgAmbiguity(config: Pick<Config, 'mode' | 'siteOrgSlug' | 'baseDomain'>, slugs: readonly string[]): string | undefined {
  if (config.mode !== 'site' || config.siteOrgSlug || slugs.length < 2) return undefined
  const named = [...slugs].sort().join(', ')
  return (
    `this site server holds ${slugs.length} organisations (${named}) and SITEGRID_SITE_ORG names none: requests to hosts other than ` +
    `{slug}.${config.baseDomain} serve no organisation (401); set SITEGRID_SITE_ORG to the one this site serves`
  )
}
