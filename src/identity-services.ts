// The services of who is who, apart from the HTTP application (app.ts) so that a CLI command that needs them
// (cli/runtime.ts) loads no fastify and no routes.
import type { Clock } from './clock.ts'
import type { Config } from './config/schema.ts'
import type { DatabaseHandle } from './db/connect.ts'
import { endSessionsOfAccount } from './auth/sessions/end-sessions.ts'
import { createLockout } from './auth/site-pin/lockout.ts'
import { createApiKeysService } from './modules/api-keys/service.ts'
import { recordAudit } from './modules/audit/service.ts'
import { createOrgsService } from './modules/orgs/service.ts'
import { createMembersService } from './modules/orgs/members-service.ts'
import { createPlatformAdminsService } from './modules/orgs/platform-admins-service.ts'
import { pinScryptCost } from './modules/site-users/pin-hash.ts'
import { createSiteUsersService } from './modules/site-users/service.ts'
import { createSitesService } from './modules/sites/service.ts'

/**
 * The services of who is who: organisations, keys, members, platform admins, site users and their sign-in locks.
 * Built for buildApp (app.ts) and for the CLI's commands (cli/runtime.ts), so both wire identity the same way.
 */
export function createIdentityServices(deps: { config: Config; handle: DatabaseHandle; clock: Clock }) {
  const { config, handle, clock } = deps
  const siteUsers = createSiteUsersService({ handle, clock, scryptCost: pinScryptCost(config) })
  return {
    orgs: createOrgsService({ handle, clock }),
    // The sites only to check a site-restricted key's site (`require`): no deletion through this one, so no dependents.
    apiKeys: createApiKeysService({ handle, clock, keySecret: config.keySecret, sites: createSitesService({ handle, clock, dependents: [] }) }),
    members: createMembersService({ handle, clock, endSessions: endSessionsOfAccount }),
    platformAdmins: createPlatformAdminsService({ handle, clock }),
    siteUsers,
    lockout: createLockout({
      handle,
      clock,
      normaliseEmail: siteUsers.normaliseEmail,
      audit: (trx, orgId, actor, entry) => recordAudit(trx, clock, orgId, actor, entry),
    }),
  }
}
