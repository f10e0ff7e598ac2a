import fastifyCookie from '@fastify/cookie'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { NotFound } from '../../errors/domain-error.ts'
import { problemResponses } from '../../http/problem.ts'
import type { Tenancy } from '../../http/tenancy.ts'
import type { Org } from '../../identity.ts'
import { clearHostCookie, LOGIN_COOKIE, originOf, readCookie, requireSameOrigin, SESSION_COOKIE, setHostCookie } from './cookies.ts'
import { CallbackQuery, LoginQuery, Redirect, SessionTokenSchema } from './schemas.ts'
import { LOGIN_TTL_MS, type SessionsService } from './service.ts'
import { docs } from './docs.ts'
import { NO_STORE, withHeaders } from '../../http/openapi.ts'

const TAGS = ['Sign-in']

export const sessionRoutes: FastifyPluginAsyncTypebox<{ sessions: SessionsService; tenancy: Tenancy; scheme: 'https' | 'http' }> = async (
  app,
  { sessions, tenancy, scheme },
) => {
  await app.register(fastifyCookie)

  // Public routes skip the auth hook, so the host's organisation is resolved here (unknown host: uniform 404).
  async function hostOrg(request: FastifyRequest): Promise<Org> {
    const org = await tenancy.resolve(request.hostname)
    if (!org) throw new NotFound()
    return org
  }

  app.get(
    '/auth/login',
    {
      config: { policy: 'public' },
      schema: {
        tags: TAGS,
        operationId: 'startSignIn',
        summary: 'Start a browser sign-in',
        security: [],
        description: docs.startSignIn,
        querystring: LoginQuery,
        response: { 302: Redirect("To the provider's authorize URL."), ...problemResponses(400, 404, 429) },
      },
    },
    async (request, reply) => {
      const org = await hostOrg(request)
      const { cookie, authorizeUrl } = await sessions.startLogin(org, {
        origin: originOf(request, scheme),
        returnTo: request.query.returnTo,
        loginHint: request.query.loginHint,
      })
      setHostCookie(reply, LOGIN_COOKIE, cookie, LOGIN_TTL_MS / 1000)
      return reply.code(302).header('cache-control', 'no-store').header('location', authorizeUrl).send(null)
    },
  )

  app.get(
    '/auth/callback',
    {
      config: { policy: 'public' },
      schema: {
        tags: TAGS,
        operationId: 'finishSignIn',
        summary: 'Finish a browser sign-in (the provider redirects here)',
        security: [],
        description: docs.finishSignIn,
        querystring: CallbackQuery,
        response: { 303: Redirect('To the `returnTo` path given at login (default `/`).'), ...problemResponses(400, 404, 429, 503) },
      },
    },
    async (request, reply) => {
      const org = await hostOrg(request)
      const query = new URLSearchParams(request.raw.url?.split('?')[1] ?? '')
      clearHostCookie(reply, LOGIN_COOKIE)
      const session = await sessions.completeLogin(org, {
        loginCookie: readCookie(request, LOGIN_COOKIE),
        previousSession: readCookie(request, SESSION_COOKIE),
        query,
      })
      setHostCookie(reply, SESSION_COOKIE, session.cookie, session.maxAgeSec)
      return reply.code(303).header('cache-control', 'no-store').header('location', session.returnTo).send(null)
    },
  )

  app.post(
    '/auth/token',
    {
      config: { policy: 'public' },
      schema: {
        tags: TAGS,
        operationId: 'getSessionToken',
        summary: "The session's access token",
        security: [],
        description: docs.sessionAccessToken,
        response: { 200: withHeaders(SessionTokenSchema, NO_STORE), ...problemResponses(401, 403, 404, 429, 503) },
      },
    },
    async (request, reply) => {
      const org = await hostOrg(request)
      requireSameOrigin(request, scheme)
      const token = await sessions.tokenFor(org, readCookie(request, SESSION_COOKIE))
      return reply
        .header('cache-control', 'no-store')
        .send({ accessToken: token.accessToken, tokenType: 'Bearer' as const, expiresAt: new Date(token.expiresAt).toISOString() })
    },
  )

  app.post(
    '/auth/logout',
    {
      config: { policy: 'public' },
      schema: {
        tags: TAGS,
        operationId: 'signOut',
        summary: 'Sign out',
        security: [],
        description: docs.signOut,
        response: { 204: { type: 'null', description: 'Signed out.' }, ...problemResponses(403, 404, 429) },
      },
    },
    async (request, reply) => {
      const org = await hostOrg(request)
      requireSameOrigin(request, scheme)
      await sessions.logout(org, readCookie(request, SESSION_COOKIE))
      clearHostCookie(reply, SESSION_COOKIE)
      return reply.code(204).send(null)
    },
  )
}
