import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problemResponses } from '../../http/problem.ts'
import { MeSchema } from './schemas.ts'
import type { MeService } from './service.ts'

/** Mounted at /api/me. */
export const meRoutes: FastifyPluginAsyncTypebox<{ me: MeService }> = async (app, { me }) => {
  app.get('/', {
    config: { policy: 'member' },
    schema: {
      tags: ['Identity'], summary: 'Who is calling',
      description: 'The authenticated caller: credential kind, id, role (organisation role in cloud mode, site role on a site server), platform-admin flag, display name and e-mail, the host\'s organisation and the server\'s mode. The web console reads it after sign-in; integrators can use it to check a credential. Policy: any member (API key, signed-in user or site user); a signed-in account whose membership request is still pending gets 403.',
      response: { 200: MeSchema, ...problemResponses(401, 403, 429) },
    },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store')
    return me.describe(request.org, request.principal)
  })
}
