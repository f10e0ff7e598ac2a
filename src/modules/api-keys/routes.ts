import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import { problemResponses } from '../../http/problem.ts'
import { ApiKeyListSchema, ApiKeyParams, MintApiKeyBody, MintedApiKeySchema, RevokeApiKeyBody } from './schemas.ts'
import type { ApiKeysService } from './service.ts'

const POLICY_NOTE = 'Policy: cloud mode, organisation owner or admin (OrgAdmin) or a platform admin; site mode, site role owner or admin (a site-PIN principal included). Members: 403.'

export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ apiKeys: ApiKeysService }> = async (app, { apiKeys }) => {
  app.post('/', {
    config: { policy: 'admin' },
    schema: {
      tags: ['API keys'], summary: 'Mint a tenant API key',
      description: `Returns the plaintext exactly once. The tenant is the caller's organisation, never taken from the body. ${POLICY_NOTE}`,
      body: MintApiKeyBody,
      response: { 201: MintedApiKeySchema, ...problemResponses(400, 401, 403, 413, 415, 429) },
    },
  }, async (request, reply) => {
    const minted = await apiKeys.mint(request.principal.orgId, actorOf(request.principal), request.body)
    return reply.code(201).header('cache-control', 'no-store').send(minted)
  })

  app.get('/', {
    config: { policy: 'admin' },
    schema: {
      tags: ['API keys'], summary: 'List the organisation\'s keys',
      description: `Non-revoked keys (expired ones included), newest created first. Never a plaintext or verifier. ${POLICY_NOTE}`,
      response: { 200: ApiKeyListSchema, ...problemResponses(401, 403, 429) },
    },
  }, async (request) => apiKeys.list(request.principal.orgId))

  app.delete('/:keyId', {
    config: { policy: 'admin' },
    schema: {
      tags: ['API keys'], summary: 'Revoke a key',
      description: `204 with no body. An absent, foreign or already revoked key answers the same 404: a client retrying after a timeout may treat it as success. A key may revoke itself. ${POLICY_NOTE}`,
      params: ApiKeyParams,
      body: RevokeApiKeyBody,
      response: { 204: { type: 'null', description: 'Revoked.' }, ...problemResponses(400, 401, 403, 404, 429) },
    },
  }, async (request, reply) => {
    await apiKeys.revoke(request.principal.orgId, actorOf(request.principal), request.params.keyId, request.body?.reason ?? null)
    return reply.code(204).send(null)
  })
}
