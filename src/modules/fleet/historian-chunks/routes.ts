import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Policy } from '../../../http/auth.ts'
import { problemResponses } from '../../../http/problem.ts'
import type { Principal } from '../../../identity.ts'
import { docs } from './docs.ts'
import { BatchChunksParams, BatchChunksSchema, ChunkParams, ChunkReceiptSchema, PutChunkBody } from './schemas.ts'
import type { HistorianChunksService, LinkPeer } from './service.ts'

// TODO(issue 26, after the enrolment helper's merge): `policy: 'link'` and `principal.sites` exist in http/auth.ts and
// identity.ts; until then the policy is named through a cast and app.ts does not register these routes.
const LINK_POLICY = 'link' as unknown as Policy

/** The `link` principal: its subject is the site server's id, `sites` the sites it was registered for. */
function peerOf(principal: Principal): LinkPeer {
  const { sites } = principal as Principal & { sites?: readonly string[] }
  return { serverId: principal.subject, sites: sites ?? [] }
}

/** Mounted at /api/link/historian. The organisation and the sites come from the link principal, never from the body. */
export const historianChunksRoutes: FastifyPluginAsyncTypebox<{ chunks: HistorianChunksService }> = async (app, { chunks }) => {
  app.put(
    '/:batchId/chunks/:n',
    {
      config: { policy: LINK_POLICY },
      schema: {
        tags: ['Fleet link'],
        summary: "Store a chunk of a historian batch's samples",
        description: docs.putChunk,
        params: ChunkParams,
        body: PutChunkBody,
        response: { 200: ChunkReceiptSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422, 429) },
      },
    },
    async (request) => chunks.receiveChunk(request.org.id, peerOf(request.principal), request.params.batchId, request.params.n, request.body),
  )

  app.get(
    '/:batchId/chunks',
    {
      config: { policy: LINK_POLICY },
      schema: {
        tags: ['Fleet link'],
        summary: "List the chunks of a historian batch's samples received",
        description: docs.listChunks,
        params: BatchChunksParams,
        response: { 200: BatchChunksSchema, ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (request) => chunks.listChunks(request.org.id, peerOf(request.principal), request.params.batchId),
  )
}
