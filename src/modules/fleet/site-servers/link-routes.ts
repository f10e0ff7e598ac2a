import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Unauthorized } from '../../../errors/domain-error.ts'
import { problemResponses } from '../../../http/problem.ts'
import type { Tenancy } from '../../../http/tenancy.ts'
import { LinkVersionMismatch } from './errors.ts'
import { CURSOR_HEADER, LINK_PROTOCOL, PROTOCOL_HEADER, SCHEMA_HEADER, SCHEMA_VERSION } from './protocol.ts'
import { EnrolBody, EnrolmentSchema, ReseedAnswerSchema, ReseedBody, SeedQuery } from './schemas.ts'
import type { SiteServersService } from './service.ts'
import { docs } from './docs.ts'
import { NO_STORE, withHeaders } from '../../../http/openapi.ts'

const TAGS = ['Fleet link']

/** The link endpoints of enrolment (cloud mode): POST /api/link/enrol and GET /api/link/seed. */
export const linkEnrolmentRoutes: FastifyPluginAsyncTypebox<{ tenancy: Tenancy; siteServers: SiteServersService }> = async (app, { tenancy, siteServers }) => {
  // Every answer of the link announces this side's versions, refusals included, so an incompatible peer can say why.
  app.addHook('onSend', async (_request, reply) => {
    reply.header(PROTOCOL_HEADER, String(LINK_PROTOCOL)).header(SCHEMA_HEADER, SCHEMA_VERSION)
  })

  app.post(
    '/api/link/enrol',
    {
      config: { policy: 'public' },
      schema: {
        tags: TAGS,
        operationId: 'enrolSiteServer',
        summary: 'Enrol a site server (exchange its one-time code)',
        security: [],
        description: docs.enrol,
        body: EnrolBody,
        response: { 200: withHeaders(EnrolmentSchema, NO_STORE), ...problemResponses(400, 401, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const org = await tenancy.resolve(request.hostname)
      if (!org) throw new Unauthorized()
      const enrolment = await siteServers.enrol(org, request.body)
      return reply.header('cache-control', 'no-store').send(enrolment)
    },
  )

  app.get(
    '/api/link/seed',
    {
      config: { policy: 'link' },
      schema: {
        tags: TAGS,
        operationId: 'getLinkSeed',
        summary: 'Seed a site server with one of its sites',
        description: docs.seed,
        querystring: SeedQuery,
        response: {
          200: {
            description: 'The package (application/gzip), streamed.',
            headers: { ...NO_STORE, [CURSOR_HEADER]: { type: 'string', description: 'The position in the change feed the seed was read at (`tx.seq`).' } },
            content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
          },
          ...problemResponses(400, 401, 403, 404, 409, 429),
        },
      },
    },
    async (request, reply) => {
      const announced = request.headers[PROTOCOL_HEADER]
      if (announced !== String(LINK_PROTOCOL)) throw new LinkVersionMismatch(String(announced ?? 'none'), LINK_PROTOCOL)
      const { cursor, stream } = await siteServers.seed(request.org, request.principal, request.query.site)
      return reply
        .type('application/gzip')
        .header(CURSOR_HEADER, `${cursor.tx}.${cursor.seq}`)
        .header('cache-control', 'no-store')
        .send(stream as never) // a stream, documented above as binary
    },
  )

  app.post(
    '/api/link/reseed',
    {
      config: { policy: 'link' },
      schema: {
        tags: TAGS,
        operationId: 'reseedLink',
        summary: 'Start a site server’s outbox anew (a reseed after a restore)',
        description: docs.reseed,
        body: ReseedBody,
        response: { 200: withHeaders(ReseedAnswerSchema, NO_STORE), ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429) },
      },
      // Before the body's validation: a peer of another protocol gets the version status (protocol 1's `after` was a seq).
      preValidation: async (request) => {
        const announced = request.headers[PROTOCOL_HEADER]
        if (announced !== String(LINK_PROTOCOL)) throw new LinkVersionMismatch(String(announced ?? 'none'), LINK_PROTOCOL)
      },
    },
    async (request, reply) => {
      return reply.header('cache-control', 'no-store').send(await siteServers.reseed(request.org, request.principal, request.body))
    },
  )
}
