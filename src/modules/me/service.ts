import { Forbidden } from '../../errors/domain-error.ts'
import type { Org, Principal } from '../../identity.ts'
import type { ApiKeysService } from '../api-keys/service.ts'
import type { MembersService } from '../orgs/members-service.ts'
import type { SiteUsersService } from '../site-users/service.ts'
import type { Me } from './schemas.ts'

/** Who the caller is, read through the owning areas' services (key, membership, site user). */
export function createMeService(deps: {
  mode: 'cloud' | 'site'
  apiKeys: Pick<ApiKeysService, 'describe'>
  members: Pick<MembersService, 'profileOf'>
  siteUsers: Pick<SiteUsersService, 'get'>
}) {
  return {
    async describe(org: Org, principal: Principal): Promise<Me> {
      if (principal.kind === 'link') throw new Forbidden() // the link policy alone admits one (http/auth.ts): never reached
      const base = {
        kind: principal.kind,
        role: principal.role,
        isPlatformAdmin: principal.isPlatformAdmin,
        orgSlug: org.slug,
        mode: deps.mode,
        siteId: null,
        networks: null,
      }
      if (principal.kind === 'apiKey') {
        const key = await deps.apiKeys.describe(principal.orgId, principal.subject)
        return {
          ...base,
          id: principal.subject,
          name: key?.name ?? principal.subject,
          email: null,
          siteId: key?.siteId ?? null,
          networks: key?.networks ?? null,
        }
      }
      if (principal.kind === 'sitePin') {
        const user = await deps.siteUsers.get(principal.orgId, principal.subject)
        return { ...base, id: principal.subject, name: user.displayName, email: user.email }
      }
      const account = principal.account ?? principal.subject
      const profile = await deps.members.profileOf(principal.orgId, account)
      return { ...base, id: account, name: profile?.name ?? profile?.email ?? account, email: profile?.email ?? null }
    },
  }
}

export type MeService = ReturnType<typeof createMeService>
