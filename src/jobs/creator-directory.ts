import type { Clock } from '../clock.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import { NotFound } from '../errors/domain-error.ts'
import type { OrgId } from '../ids.ts'
import type { CreatorDirectory } from '../modules/reminders/service.ts'
import { createSiteUsersService } from '../modules/site-users/service.ts'

/**
 * E-mail addresses of the people who mint keys, for expiry reminders: site users by id (site-PIN principals).
 * A signed-in user is known by the token's pairwise `sub`, which the membership records do not keep, so those
 * keys have no address yet and are recorded as skipped (issue 12 note).
 */
export function creatorDirectory(handle: DatabaseHandle, clock: Clock): CreatorDirectory {
  const siteUsers = createSiteUsersService({ handle, clock })
  return async (orgId, kind, subject) => {
    if (kind !== 'sitePin') return undefined
    try {
      return (await siteUsers.get(orgId as OrgId, subject)).email
    } catch (err) {
      if (err instanceof NotFound) return undefined
      throw err
    }
  }
}
