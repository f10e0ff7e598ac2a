import type { Config } from '../config/schema.ts'
import type { Org } from '../identity.ts'
import type { OrgsService } from '../modules/orgs/service.ts'
import { UsageError } from './command.ts'
import { NotOnServer } from './errors.ts'

/** `--org SLUG` of the commands that act in one organisation and default to the site's. */
export const ORG_OPTION = {
  org: { type: 'string', value: 'SLUG', description: 'the organisation (default: SITEGRID_SITE_ORG, or the only one on this server)' },
} as const

/** The organisation a command names by its slug; NotFound naming the slug when there is none. */
export async function orgBySlug(orgs: Pick<OrgsService, 'findBySlug'>, slug: string): Promise<Org> {
  const org = await orgs.findBySlug(slug)
  if (!org) throw new NotOnServer(`no organisation ${JSON.stringify(slug)} on this server (\`sitegrid org list\` shows them)`)
  return org
}

/** `--org SLUG`, else the site's organisation: SITEGRID_SITE_ORG, or the only one there is. */
export async function siteOrg(orgs: OrgsService, config: Config, slug: unknown): Promise<Org> {
  const wanted = typeof slug === 'string' ? slug : config.siteOrgSlug
  if (wanted !== undefined) {
    return orgBySlug(orgs, wanted)
  }
  const all = await orgs.list()
  if (all.length !== 1)
    throw new UsageError(
      all.length === 0 ? 'no organisation exists yet: run `sitegrid org create SLUG` first' : '--org SLUG is required when several organisations exist',
    )
  return all[0]!
}
