import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problemResponses } from '../../http/problem.ts'
import type { OrgId } from '../../ids.ts'
import { SiteUserParams, SiteUserUnlockedSchema } from './schemas.ts'
import type { SiteUsersService } from './service.ts'
import { docs } from './docs.ts'
import { actorOf, type Actor } from '../../identity.ts'

/** The sign-in locks (auth/site-pin/lockout.ts satisfies it; app.ts passes it in). */
export interface SignInLocks {
  /** Ends the lock of an e-mail (known or not), forgets its failures and records it in the audit log. */
  unlockEmail(orgId: OrgId, actor: Actor, email: string): Promise<{ wasLockedUntil: number }>
}

type UnlockRoutesOptions = { siteUsers: SiteUsersService; lockout: SignInLocks }

/** The console's way to end a site user's sign-in lock (the CLI's is `sitegrid site-user unlock --email`). */
export const siteUnlockRoutes: FastifyPluginAsyncTypebox<UnlockRoutesOptions> = async (app, { siteUsers, lockout }) => {
  app.post(
    '/:userId/unlock',
    {
      config: { policy: 'owner' },
      schema: {
        tags: ['Site users'],
        operationId: 'unlockSiteUser',
        summary: "End a site user's sign-in lock",
        description: docs.unlockSignIn,
        params: SiteUserParams,
        response: { 200: SiteUserUnlockedSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => {
      const user = await siteUsers.get(request.principal.orgId, request.params.userId)
      const { wasLockedUntil } = await lockout.unlockEmail(request.principal.orgId, actorOf(request.principal), user.email)
      return { email: user.email, wasLockedUntil: wasLockedUntil ? new Date(wasLockedUntil).toISOString() : null }
    },
  )
}
