import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import type { Mode } from '../../config/schema.ts'
import { problemResponses } from '../../http/problem.ts'
import { ReloadConfigBody, ReloadResultSchema } from './reload-schemas.ts'
import type { ReloadService } from './reload-service.ts'

/** Mounted at /api/admin/config. The policy depends on the mode, fixed at start-up. */
export const reloadRoutes: FastifyPluginAsyncTypebox<{ reloads: ReloadService; mode: Mode }> = async (app, { reloads, mode }) => {
  app.post('/reload', {
    config: { policy: mode === 'cloud' ? 'platformAdmin' : 'owner' },
    schema: {
      tags: ['Organisation administration'], summary: 'Reload the configuration',
      description: 'Rereads the configuration file and the environment and validates all of it. Valid: the reloadable settings (`SITEGRID_LOG_LEVEL`, `SITEGRID_RATE_LIMIT_PER_MINUTE`, `SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE`) are swapped in atomically and listed under `changed`; other differences are listed under `requiresRestart` and the running values stay. Invalid: 422 `UnprocessableEntity` naming every problem in `problems`, and the running configuration stays in force. Every attempt, refused ones included, writes an audit record (who, what changed, the reason). This process only: with N processes, reload each. Policy: cloud mode, platform admins only; site mode, the site role owner (a site-PIN owner included).',
      body: ReloadConfigBody,
      response: { 200: ReloadResultSchema, ...problemResponses(400, 401, 403, 413, 415, 422, 429) },
    },
  }, async (request) => reloads.reload(request.org.id, actorOf(request.principal), request.body?.reason ?? null))
}
