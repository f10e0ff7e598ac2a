import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problemResponses } from '../../http/problem.ts'
import { MeSchema } from './schemas.ts'
import type { MeService } from './service.ts'
import { docs } from './docs.ts'
import { NO_STORE, withHeaders } from '../../http/openapi.ts'

/** Mounted at /api/me. */
export const meRoutes: FastifyPluginAsyncTypebox<{ me: MeService }> = async (app, { me }) => {
  app.get(
    '/',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Identity'],
        operationId: 'getMe',
        summary: 'Who is calling',
        description: docs.me,
        response: { 200: withHeaders(MeSchema, NO_STORE), ...problemResponses(401, 403, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      return me.describe(request.org, request.principal)
    },
  )
}
