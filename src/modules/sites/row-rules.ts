import { recordRules, type RuleBreak } from '../../http/validation.ts'
import { CreateSiteBody, type CreateSiteInput } from './schemas.ts'
import { checkTimeZone } from './service.ts'

// An update holds a site to the create's rules (every field optional there, none wider).
const siteRules = recordRules<CreateSiteInput>(CreateSiteBody, (site) => {
  checkTimeZone(site.timeZone)
  return []
})

/** The first rule of POST /api/sites a stored site row breaks, for rows that arrive without a request. */
export function siteRowBreak(row: Readonly<Record<string, unknown>>): RuleBreak | undefined {
  return siteRules({ code: row.code, name: row.name, description: row.description, location: row.location, timeZone: row.time_zone, status: row.status })
}
