import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { createApiKeyValidator } from './auth/api-key-validator.ts'
import { peekIssuer } from './auth/oidc/peek-issuer.ts'
import type { Clock } from './clock.ts'
import type { Config } from './config/schema.ts'
import type { DatabaseHandle } from './db/connect.ts'
import { installAuth } from './http/auth.ts'
import { healthRoutes } from './http/health.ts'
import { installOpenApi } from './http/openapi.ts'
import { installProblemHandlers, ProblemSchema } from './http/problem.ts'
import { createRateLimiter } from './http/rate-limit.ts'
import { createTenancy } from './http/tenancy.ts'
import { installValidators } from './http/validation.ts'
import { createLastUsedTracker } from './jobs/last-used.ts'
import { apiKeysRoutes } from './modules/api-keys/routes.ts'
import { createApiKeysService } from './modules/api-keys/service.ts'
import { createOrgsService } from './modules/orgs/service.ts'
import { sitesRoutes } from './modules/sites/routes.ts'
import { createSitesService, type SiteDependent } from './modules/sites/service.ts'

export interface AppDeps {
  config: Config
  handle: DatabaseHandle
  clock: Clock
  log: FastifyBaseLogger
}

/** Builds the whole HTTP application from its dependencies; no globals, so tests build their own. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>> {
  const { config, handle, clock, log } = deps
  if (!config.keySecret) throw new TypeError('buildApp needs the API-key verifier secret')
  const requestIdPrefix = randomBytes(4).toString('hex')
  let requestCounter = 0

  const app = Fastify({
    loggerInstance: log,
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Fixed-length ids keep every uniform 401 the same length.
    genReqId: () => `${requestIdPrefix}-${(requestCounter++ % 0xffffffff).toString(16).padStart(8, '0')}`,
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.addSchema(ProblemSchema)
  installValidators(app)
  installProblemHandlers(app)
  await installOpenApi(app, config)

  const orgs = createOrgsService({ handle, clock })
  const lastUsed = createLastUsedTracker({ handle, flushMs: config.lastUsedFlushMs, onError: (err) => log.warn({ err }, 'lastUsedAt flush failed') })
  installAuth(app, {
    config,
    tenancy: createTenancy({ config, orgs, handle }),
    validateApiKey: createApiKeyValidator({ handle, clock, keySecret: config.keySecret, onUse: lastUsed.touch }),
    bearerValidators: [],
    peekIssuer,
    rateLimiter: createRateLimiter({ perMinute: config.rateLimitPerMinute, clock }),
  })

  await app.register(healthRoutes, { handle, openapi: () => app.swagger() })
  // Each site-scoped area adds what it owns under a site, for the deletion preview (DELETE /api/sites/{code}).
  const siteDependents: SiteDependent[] = []
  const sites = createSitesService({ handle, clock, dependents: siteDependents })
  await app.register(sitesRoutes, { prefix: '/api/sites', sites })
  await app.register(apiKeysRoutes, { prefix: '/api/admin/api-keys', apiKeys: createApiKeysService({ handle, clock, keySecret: config.keySecret }) })

  app.addHook('onClose', async () => { await lastUsed.stop() })
  return app
}
