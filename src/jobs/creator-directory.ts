import type { Clock } from '../clock.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import { NotFound } from '../errors/domain-error.ts'
import type { OrgId } from '../ids.ts'
import { createMembersService } from '../modules/orgs/members-service.ts'
import type { CreatorDirectory } from '../modules/reminders/service.ts'
import { createSiteUsersService } from '../modules/site-users/service.ts'

/**
 * E-mail addresses of the people who mint keys, for expiry reminders: a site user by id (site-PIN principals),
 * a signed-in user by the membership key (`oid`) the key recorded at mint time — the pairwise `sub` alone names
 * no membership. The address is the membership's current one, so a changed e-mail is followed.
 */
export function creatorDirectory(handle: DatabaseHandle, clock: Clock): CreatorDirectory {
  const siteUsers = createSiteUsersService({ handle, clock })
  const members = createMembersService({ handle, clock })
  return async (orgId, creator) => {
    if (creator.kind === 'user') return creator.account === null ? undefined : members.emailOf(orgId as OrgId, creator.account)
    try {
      return (await siteUsers.get(orgId as OrgId, creator.subject)).email
    } catch (err) {
      if (err instanceof NotFound) return undefined
      throw err
    }
  }
}
