import { NotFound } from '../errors/domain-error.ts'
import type { OrgId } from '../ids.ts'

/** Who minted a key, for a reminder to a person: a signed-in user (`user`) or a site user (`sitePin`). */
export interface PersonCreator {
  readonly kind: 'user' | 'sitePin'
  readonly subject: string
  readonly account: string | null
}

/**
 * E-mail addresses of the people who mint keys, for expiry reminders: a site user by id (site-PIN principals),
 * a signed-in user by the membership key (`oid`) the key recorded at mint time — the pairwise `sub` alone names
 * no membership. The address is the membership's current one, so a changed e-mail is followed.
 * The members and site-users services are passed in (cli/ builds them): jobs/ imports no module.
 */
export function creatorDirectory(deps: {
  members: { emailOf(orgId: OrgId, accountId: string): Promise<string | undefined> }
  /** Throws NotFound for an absent user. */
  siteUsers: { get(orgId: OrgId, userId: string): Promise<{ email: string }> }
}): (orgId: string, creator: PersonCreator) => Promise<string | undefined> {
  const { members, siteUsers } = deps
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
