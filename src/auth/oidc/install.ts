import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Clock } from '../../clock.ts'
import type { Config } from '../../config/schema.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { BearerValidator } from '../../http/auth.ts'
import type { Tenancy } from '../../http/tenancy.ts'
import { membersRoutes } from '../../modules/orgs/members-routes.ts'
import { createMembersService } from '../../modules/orgs/members-service.ts'
import { createPlatformAdminsService } from '../../modules/orgs/platform-admins-service.ts'
import type { OrgsService } from '../../modules/orgs/service.ts'
import { sessionRoutes } from '../sessions/routes.ts'
import { createSessionsService } from '../sessions/service.ts'
import { createOidcPrincipalValidator } from './principal-validator.ts'
import { startRelyingParty } from './relying-party.ts'

/**
 * Issue 4, people in a cloud cell: the OIDC bearer validator for the auth selector (loaded at start-up:
 * discovery and key set, never on the request path), the member administration routes, and the browser
 * session routes when a client is configured. Without an issuer (site mode) only the member routes exist.
 */
export async function createIdentity(deps: { config: Config; handle: DatabaseHandle; clock: Clock; log: FastifyBaseLogger }) {
  const { config, handle, clock, log } = deps
  const members = createMembersService({ handle, clock })
  const platformAdmins = createPlatformAdminsService({ handle, clock })
  const relyingParty = config.oidc === undefined ? undefined : await startRelyingParty(config.oidc, clock, log)
  const bearerValidators: BearerValidator[] = relyingParty === undefined
    ? []
    : [createOidcPrincipalValidator({ relyingParty, members, platformAdmins, handle, log })]
  return {
    members,
    bearerValidators,
    async register(app: FastifyInstance, deps2: { tenancy: Tenancy; orgs: OrgsService }): Promise<void> {
      await app.register(membersRoutes, { prefix: '/api/admin/orgs', members, orgs: deps2.orgs })
      const client = config.oidc?.client
      if (relyingParty === undefined || client === undefined || !config.keySecret) return
      const sessions = createSessionsService({ handle, clock, relyingParty, client, members, platformAdmins, keySecret: config.keySecret, log })
      await app.register(sessionRoutes, { sessions, tenancy: deps2.tenancy, scheme: config.publicOriginScheme })
    },
  }
}
