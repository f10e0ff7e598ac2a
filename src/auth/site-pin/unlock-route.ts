import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problemResponses } from '../../http/problem.ts'
import { SiteUserParams } from '../../modules/site-users/schemas.ts'
import type { SiteUsersService } from '../../modules/site-users/service.ts'
import { actorOf } from '../principal.ts'
import type { Lockout } from './lockout.ts'
import { SiteUserUnlockedSchema } from './schemas.ts'
import { docs } from './docs.ts'

/** The console's way to end a site user's sign-in lock (the CLI's is `sitegrid site-user unlock --email`). */
export const siteUnlockRoutes: FastifyPluginAsyncTypebox<{ siteUsers: SiteUsersService; lockout: Lockout }> = async (app, { siteUsers, lockout }) => {
  app.post('/:userId/unlock', {
    config: { policy: 'owner' },
    schema: {
      tags: ['Site users'], summary: 'End a site user\'s sign-in lock',
      description: docs.unlockSignIn,
      params: SiteUserParams,
      response: { 200: SiteUserUnlockedSchema, ...problemResponses(401, 403, 404, 429) },
    },
  }, async (request) => {
    const user = await siteUsers.get(request.principal.orgId, request.params.userId)
    const { wasLockedUntil } = await lockout.unlockEmail(request.principal.orgId, actorOf(request.principal), user.email)
    return { email: user.email, wasLockedUntil: wasLockedUntil ? new Date(wasLockedUntil).toISOString() : null }
  })
}
