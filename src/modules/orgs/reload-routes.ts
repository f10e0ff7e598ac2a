import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import type { Mode } from '../../config/schema.ts'
import { problemResponses } from '../../http/problem.ts'
import { ReloadConfigBody, ReloadResultSchema } from './reload-schemas.ts'
import type { ReloadService } from './reload-service.ts'
import { docs } from './docs.ts'

/** Mounted at /api/admin/config. The policy depends on the mode, fixed at start-up. */
export const reloadRoutes: FastifyPluginAsyncTypebox<{ reloads: ReloadService; mode: Mode }> = async (app, { reloads, mode }) => {
  app.post(
    '/reload',
    {
      config: { policy: mode === 'cloud' ? 'platformAdmin' : 'owner' },
      schema: {
        tags: ['Organisation administration'],
        operationId: 'reloadConfig',
        summary: 'Reload the configuration',
        description: docs.reloadConfiguration,
        body: ReloadConfigBody,
        response: { 200: ReloadResultSchema, ...problemResponses(400, 401, 403, 413, 415, 422, 429) },
      },
    },
    async (request) => reloads.reload(request.org.id, actorOf(request.principal), request.body?.reason ?? null),
  )
}
