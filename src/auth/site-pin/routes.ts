import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { NotFound, Unauthorized } from '../../errors/domain-error.ts'
import { problemResponses } from '../../http/problem.ts'
import type { Tenancy } from '../../http/tenancy.ts'
import { ChangePinBody, JwksSchema, RefreshBody, SiteLoginBody, SiteSessionSchema } from './schemas.ts'
import type { SiteSignIn } from './sign-in.ts'
import type { SigningKeys } from './signing-keys.ts'
import { docs } from './docs.ts'
import { NO_STORE, withHeaders } from '../../http/openapi.ts'

const TAGS = ['Site sign-in']

/** Sign-in endpoints and the local key set of a site server (spec 5 rule 7); public by nature. */
export const sitePinRoutes: FastifyPluginAsyncTypebox<{ tenancy: Tenancy; signIn: SiteSignIn; signingKeys: SigningKeys }> = async (
  app,
  { tenancy, signIn, signingKeys },
) => {
  app.post(
    '/auth/site/login',
    {
      config: { policy: 'public' },
      schema: {
        tags: TAGS,
        operationId: 'signInWithPin',
        summary: 'Sign in with e-mail and PIN',
        security: [],
        description: docs.signIn,
        body: SiteLoginBody,
        response: { 200: withHeaders(SiteSessionSchema, NO_STORE), ...problemResponses(400, 401, 413, 415, 423, 429) },
      },
    },
    async (request, reply) => {
      const org = await tenancy.resolve(request.hostname)
      if (!org) throw new Unauthorized()
      const session = await signIn.login(org, request.body.email, request.body.pin, request.ip)
      return reply.header('cache-control', 'no-store').send(session)
    },
  )

  app.post(
    '/auth/site/pin',
    {
      config: { policy: 'public' },
      schema: {
        tags: TAGS,
        operationId: 'changeOwnPin',
        summary: "Change one's own PIN",
        description: docs.changeOwnPin,
        security: [],
        body: ChangePinBody,
        response: { 204: { type: 'null', description: 'PIN changed.' }, ...problemResponses(400, 401, 413, 415, 423, 429) },
      },
    },
    async (request, reply) => {
      const org = await tenancy.resolve(request.hostname)
      if (!org) throw new Unauthorized()
      await signIn.changePin(org, request.body.email, request.body.pin, request.body.newPin, request.ip)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/auth/site/refresh',
    {
      config: { policy: 'public' },
      schema: {
        tags: TAGS,
        operationId: 'refreshPinSession',
        summary: 'Renew the session without the PIN',
        security: [],
        description: docs.renewSession,
        body: RefreshBody,
        response: { 200: withHeaders(SiteSessionSchema, NO_STORE), ...problemResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const org = await tenancy.resolve(request.hostname)
      if (!org) throw new Unauthorized()
      return reply.header('cache-control', 'no-store').send(await signIn.refresh(org, request.body.refreshToken))
    },
  )

  app.post(
    '/auth/site/logout',
    {
      config: { policy: 'public' },
      schema: {
        tags: TAGS,
        operationId: 'signOutPinSession',
        summary: 'End the session',
        security: [],
        description: docs.endSession,
        body: RefreshBody,
        response: { 204: { type: 'null', description: 'Signed out.' }, ...problemResponses(400, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const org = await tenancy.resolve(request.hostname)
      if (org) await signIn.logout(org, request.body.refreshToken)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/.well-known/jwks.json',
    {
      config: { policy: 'public' },
      schema: {
        tags: TAGS,
        operationId: 'getSigningKeys',
        summary: 'The local public key set',
        security: [],
        description: docs.localPublicKeySet,
        response: { 200: withHeaders(JwksSchema, { 'Cache-Control': { type: 'string', enum: ['public, max-age=60'] } }), ...problemResponses(404) },
      },
    },
    async (request, reply) => {
      const org = await tenancy.resolve(request.hostname)
      if (!org) throw new NotFound()
      await signingKeys.current(org.id) // created on first need, so the set is never empty
      return reply.header('cache-control', 'public, max-age=60').send(await signingKeys.publicKeySet(org.id))
    },
  )
}
