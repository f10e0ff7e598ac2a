import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { problemResponses } from '../../http/problem.ts'
import { docs } from './docs.ts'
import { checkPeerVersions, LINK_PROTOCOL, PROTOCOL_HEADER, SCHEMA_HEADER, SCHEMA_VERSION } from './site-servers/protocol.ts'
import type { LinkService } from './link-service.ts'
import { CursorSchema, LinkTime, PullAnswerSchema, PullQuerySchema, PushAnswerSchema, PushBodySchema } from './sync/schemas.ts'

const TAGS = ['Fleet link']

const HeartbeatBodySchema = Type.Object(
  {
    state: Type.String({ maxLength: 40, description: 'The agent’s state: online, offline, revoked, version, diverged, refused.' }),
    lastError: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]),
    backlog: Type.Object(
      {
        items: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
        bytes: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
        oldestAt: Type.Union([LinkTime('When the oldest of them was made, epoch ms.'), Type.Null()]),
      },
      { additionalProperties: false, description: 'What waits on the site server to go up.' },
    ),
    pulledTo: CursorSchema,
  },
  { additionalProperties: false },
)

/**
 * The cloud's link endpoints a site server's agent calls (policy `link`: only a link credential passes, for its own
 * organisation and sites). Each checks the peer's protocol and schema first (409 LinkVersionMismatch).
 */
export const linkSyncRoutes: FastifyPluginAsyncTypebox<{ link: LinkService }> = async (app, { link }) => {
  // Every answer announces this side's versions, refusals included, so an incompatible peer can say why.
  app.addHook('onSend', async (_request, reply) => {
    reply.header(PROTOCOL_HEADER, String(LINK_PROTOCOL)).header(SCHEMA_HEADER, SCHEMA_VERSION)
  })
  // Before the body's validation: a peer of another protocol gets the version status, not a 400 about a field whose
  // shape that protocol defines otherwise (protocol 1's `after` was a seq).
  app.addHook('preValidation', async (request) => {
    checkPeerVersions(request.headers)
  })
  // A draining server (app.close(): SIGTERM) answers the pulls still waiting at once, with what they have: a long poll
  // (waitMs up to 25 s) would otherwise hold the drain past its grace period, and the agent polls again anyway.
  const closing = new AbortController()
  app.addHook('preClose', async () => closing.abort())

  app.post(
    '/push',
    {
      config: { policy: 'link' },
      bodyLimit: 64 * 1024 * 1024,
      schema: {
        tags: TAGS,
        operationId: 'pushLinkChanges',
        summary: 'Push a site server’s changes',
        description: docs.push,
        body: PushBodySchema,
        response: { 200: PushAnswerSchema, ...problemResponses(400, 401, 403, 409, 413, 415, 422, 429) },
      },
    },
    async (request) => link.push(request.principal, request.body),
  )

  app.get(
    '/pull',
    {
      config: { policy: 'link' },
      schema: {
        tags: TAGS,
        operationId: 'pullLinkChanges',
        summary: 'Pull the cloud’s changes for a site server',
        description: docs.pull,
        querystring: PullQuerySchema,
        response: { 200: PullAnswerSchema, ...problemResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request) => {
      // A client that goes away ends the wait at once, as the drain does.
      const gone = new AbortController()
      request.raw.once('close', () => gone.abort())
      const { tx, seq, limit = 500, waitMs = 0 } = request.query
      return link.pull(request.principal, { tx, seq, limit, waitMs }, AbortSignal.any([gone.signal, closing.signal]))
    },
  )

  app.put(
    '/heartbeat',
    {
      config: { policy: 'link' },
      schema: {
        tags: TAGS,
        operationId: 'putLinkHeartbeat',
        summary: 'Report a site server’s link state',
        description: docs.heartbeat,
        body: HeartbeatBodySchema,
        response: { 204: Type.Null(), ...problemResponses(400, 401, 403, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      await link.heartbeat(request.principal, { ...request.body, versions: checkPeerVersions(request.headers) })
      return reply.code(204).send(null)
    },
  )
}
