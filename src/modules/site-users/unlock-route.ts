import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Lockout } from '../../auth/site-pin/lockout.ts'
import { SiteUserUnlockedSchema } from '../../auth/site-pin/schemas.ts'
import { problemResponses } from '../../http/problem.ts'
import { SiteUserParams } from './schemas.ts'
import type { SiteUsersService } from './service.ts'
import { actorOf } from '../../identity.ts'

type UnlockRoutesOptions = { siteUsers: SiteUsersService; lockout: Pick<Lockout, 'unlockEmail'> }

/** The console's way to end a site user's sign-in lock (the CLI's is `sitegrid site-user unlock --email`). */
export const siteUnlockRoutes: FastifyPluginAsyncTypebox<UnlockRoutesOptions> = async (app, { siteUsers, lockout }) => {
  app.post('/:userId/unlock', {
    config: { policy: 'owner' },
    schema: {
      tags: ['Site users'], summary: 'End a site user\'s sign-in lock',
      description: 'Site server only. Policy: site role owner (a site-PIN principal or an API key of that role); admins and members get 403. Ends the lock that repeated wrong PINs put on the user\'s e-mail (423 `PinLocked` at sign-in) and resets its failure count, so the rightful user can sign in at once; the client-address throttle is untouched. Recorded in the audit log as `site_user.unlocked`. An absent or foreign user answers the uniform 404. No body.',
      params: SiteUserParams,
      response: { 200: SiteUserUnlockedSchema, ...problemResponses(401, 403, 404, 429) },
    },
  }, async (request) => {
    const user = await siteUsers.get(request.principal.orgId, request.params.userId)
    const { wasLockedUntil } = await lockout.unlockEmail(request.principal.orgId, actorOf(request.principal), user.email)
    return { email: user.email, wasLockedUntil: wasLockedUntil ? new Date(wasLockedUntil).toISOString() : null }
  })
}
