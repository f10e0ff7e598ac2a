import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import { problemResponses } from '../../http/problem.ts'
import { ApiKeyListSchema, ApiKeyParams, ApiKeySchema, MintApiKeyBody, MintedApiKeySchema, RevokeApiKeyBody } from './schemas.ts'
import type { ApiKeysService } from './service.ts'
import { docs } from './docs.ts'
import { NO_STORE, withHeaders } from '../../http/openapi.ts'

export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ apiKeys: ApiKeysService }> = async (app, { apiKeys }) => {
  app.post(
    '/',
    {
      config: { policy: 'admin' },
      schema: {
        tags: ['API keys'],
        operationId: 'mintApiKey',
        summary: 'Mint a tenant API key',
        description: docs.mintApiKey,
        body: MintApiKeyBody,
        response: { 201: withHeaders(MintedApiKeySchema, NO_STORE), ...problemResponses(400, 401, 403, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { principal } = request
      const minted = await apiKeys.mint(principal.orgId, { ...actorOf(principal), isPlatformAdmin: principal.isPlatformAdmin }, request.body)
      return reply.code(201).header('cache-control', 'no-store').send(minted)
    },
  )

  app.get(
    '/',
    {
      config: { policy: 'admin' },
      schema: {
        tags: ['API keys'],
        operationId: 'listApiKeys',
        summary: "List the organisation's keys",
        description: docs.listApiKeys,
        response: { 200: ApiKeyListSchema, ...problemResponses(401, 403, 429) },
      },
    },
    async (request) => apiKeys.list(request.principal.orgId),
  )

  app.get(
    '/:keyId',
    {
      config: { policy: 'admin' },
      schema: {
        tags: ['API keys'],
        operationId: 'readApiKey',
        summary: 'Read a key',
        description: docs.readApiKey,
        params: ApiKeyParams,
        response: { 200: ApiKeySchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => apiKeys.read(request.principal.orgId, request.params.keyId),
  )

  app.delete(
    '/:keyId',
    {
      config: { policy: 'admin' },
      schema: {
        tags: ['API keys'],
        operationId: 'revokeApiKey',
        summary: 'Revoke a key',
        description: docs.revokeApiKey,
        params: ApiKeyParams,
        body: RevokeApiKeyBody,
        response: { 204: { type: 'null', description: 'Revoked.' }, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await apiKeys.revoke(request.principal.orgId, actorOf(request.principal), request.params.keyId, request.body?.reason ?? null)
      return reply.code(204).send(null)
    },
  )
}
