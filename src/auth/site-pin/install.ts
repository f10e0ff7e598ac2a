import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Clock } from '../../clock.ts'
import type { Config } from '../../config/schema.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { BearerValidator } from '../../http/auth.ts'
import type { Tenancy } from '../../http/tenancy.ts'
import { siteUsersRoutes } from '../../modules/site-users/routes.ts'
import { pinScryptCost } from '../../modules/site-users/pin-hash.ts'
import { createSiteUsersService } from '../../modules/site-users/service.ts'
import { createLockout } from './lockout.ts'
import { sitePinRoutes } from './routes.ts'
import { createSiteSignIn } from './sign-in.ts'
import { createSigningKeys } from './signing-keys.ts'
import { siteUnlockRoutes } from './unlock-route.ts'
import { createSitePinValidator } from './validator.ts'

/**
 * Site mode only: the local validator for the auth selector, and the site sign-in, key-set and site-user
 * routes. On a cloud server there is no validator for `-local` issuers (their tokens get the uniform 401)
 * and none of these routes exist.
 */
export function createSitePin(deps: { config: Config; handle: DatabaseHandle; clock: Clock; log: FastifyBaseLogger }) {
  const { config, handle, clock, log } = deps
  if (config.mode !== 'site' || !config.keySecret) return { bearerValidators: [] as BearerValidator[], register: async () => {} }
  const siteUsers = createSiteUsersService({ handle, clock, scryptCost: pinScryptCost(config) })
  const signingKeys = createSigningKeys({ handle, clock, keySecret: config.keySecret })
  const lockout = createLockout({ handle, clock })
  const signIn = createSiteSignIn({ handle, clock, siteUsers, signingKeys, lockout, log })
  return {
    bearerValidators: [createSitePinValidator({ signingKeys, siteUsers, clock, log })],
    async register(app: FastifyInstance, tenancy: Tenancy): Promise<void> {
      await app.register(sitePinRoutes, { tenancy, signIn, signingKeys })
      await app.register(siteUsersRoutes, { prefix: '/api/site/users', siteUsers })
      await app.register(siteUnlockRoutes, { prefix: '/api/site/users', siteUsers, lockout })
    },
  }
}
