import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problemResponses } from '../../../http/problem.ts'
import type { Principal } from '../../../identity.ts'
import { LinkVersionMismatch } from '../site-servers/errors.ts'
import { LINK_PROTOCOL, PROTOCOL_HEADER, SCHEMA_HEADER, SCHEMA_VERSION } from '../site-servers/protocol.ts'
import { docs } from './docs.ts'
import { BatchChunksParams, BatchChunksSchema, ChunkParams, ChunkReceiptSchema, PutChunkBody, RestartQuery } from './schemas.ts'
import type { HistorianChunksService, LinkPeer } from './service.ts'

/** The `link` principal (auth/link-validator.ts): its subject is the site server's id, `sites` the sites it was registered for. */
function peerOf(principal: Principal): LinkPeer {
  return { serverId: principal.subject, sites: principal.sites ?? [] }
}

/** Mounted at /api/link/historian. The organisation and the sites come from the link principal, never from the body. */
export const historianChunksRoutes: FastifyPluginAsyncTypebox<{ chunks: HistorianChunksService }> = async (app, { chunks }) => {
  // As every link endpoint: the answer announces this side's versions (refusals included); a peer announcing another
  // protocol is refused before its body is validated or anything is stored.
  app.addHook('onSend', async (_request, reply) => {
    reply.header(PROTOCOL_HEADER, String(LINK_PROTOCOL)).header(SCHEMA_HEADER, SCHEMA_VERSION)
  })
  app.addHook('preValidation', async (request) => {
    const announced = request.headers[PROTOCOL_HEADER]
    if (announced !== String(LINK_PROTOCOL)) throw new LinkVersionMismatch(String(announced ?? 'none'), LINK_PROTOCOL)
  })
  app.put(
    '/:batchId/chunks/:n',
    {
      config: { policy: 'link' },
      schema: {
        tags: ['Fleet link'],
        operationId: 'putHistorianChunk',
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
      config: { policy: 'link' },
      schema: {
        tags: ['Fleet link'],
        operationId: 'listHistorianChunks',
        summary: "List the chunks of a historian batch's samples received",
        description: docs.listChunks,
        params: BatchChunksParams,
        response: { 200: BatchChunksSchema, ...problemResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request) => chunks.listChunks(request.org.id, peerOf(request.principal), request.params.batchId),
  )

  app.delete(
    '/:batchId/chunks',
    {
      config: { policy: 'link' },
      schema: {
        tags: ['Fleet link'],
        operationId: 'resetHistorianChunks',
        summary: "Start a historian batch's upload again from chunk 0",
        description: docs.restartChunks,
        params: BatchChunksParams,
        querystring: RestartQuery,
        response: { 200: BatchChunksSchema, ...problemResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => chunks.restartBatch(request.org.id, peerOf(request.principal), request.params.batchId, request.query.site),
  )
}
