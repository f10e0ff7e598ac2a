import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { NotFound, Unauthorized } from '../../errors/domain-error.ts'
import { problemResponses } from '../../http/problem.ts'
import type { Tenancy } from '../../http/tenancy.ts'
import { PinLocked, SignInThrottled } from './errors.ts'
import { ChangePinBody, JwksSchema, RefreshBody, SiteLoginBody, SiteSessionSchema } from './schemas.ts'
import type { SiteSignIn } from './sign-in.ts'
import type { SigningKeys } from './signing-keys.ts'

const TAGS = ['Site sign-in']

/** Sign-in endpoints and the local key set of a site server (spec 5 rule 7); public by nature. */
export const sitePinRoutes: FastifyPluginAsyncTypebox<{ tenancy: Tenancy; signIn: SiteSignIn; signingKeys: SigningKeys }> = async (app, { tenancy, signIn, signingKeys }) => {
  app.post('/auth/site/login', {
    config: { policy: 'public' },
    schema: {
      tags: TAGS, summary: 'Sign in with e-mail and PIN', security: [],
      description: 'Policy: public (this is the sign-in). Returns a 15-minute access token and a refresh token. An unknown e-mail and a wrong PIN get the same 401 in the same time. Each attempt is counted on its e-mail (known or not) and on its client address before its PIN is checked, so parallel requests, other addresses and other server processes check no more PINs: after 5 failures the e-mail and the address each lock, 30 s at first and doubling with each further failure (at most 1 h). While locked no PIN is checked: a locked address gets 429 `SignInThrottled`; a locked e-mail gets 423 `PinLocked` whatever the PIN and whether or not a site user has it (same status, body and headers). Both carry `Retry-After` and `lockedUntil`, the lock\'s end; an owner ends an e-mail\'s lock with `sitegrid site-user unlock --email`. A correct PIN resets the e-mail\'s count and counts nowhere.',
      body: SiteLoginBody,
      response: { 200: SiteSessionSchema, ...problemResponses(400, 401, 413, 415, 423, 429) },
    },
  }, async (request, reply) => {
    const org = await tenancy.resolve(request.hostname)
    if (!org) throw new Unauthorized()
    try {
      const session = await signIn.login(org, request.body.email, request.body.pin, request.ip)
      return reply.header('cache-control', 'no-store').send(session)
    } catch (err) {
      if (err instanceof PinLocked || err instanceof SignInThrottled) reply.header('retry-after', String(err.retryAfterSec))
      throw err
    }
  })

  app.post('/auth/site/pin', {
    config: { policy: 'public' },
    schema: {
      tags: TAGS, summary: 'Change one\'s own PIN',
      description: 'Policy: public (the current PIN is the credential); any site role. The same checks, answers and locks as sign-in, counted on the same counters (401; while locked, whatever the PIN, 423 `PinLocked` or 429 `SignInThrottled` with `Retry-After` and `lockedUntil`). 204; every session of the user ends, so sign in again with the new PIN.',
      security: [],
      body: ChangePinBody,
      response: { 204: { type: 'null', description: 'PIN changed.' }, ...problemResponses(400, 401, 413, 415, 423, 429) },
    },
  }, async (request, reply) => {
    const org = await tenancy.resolve(request.hostname)
    if (!org) throw new Unauthorized()
    try {
      await signIn.changePin(org, request.body.email, request.body.pin, request.body.newPin, request.ip)
      return reply.code(204).send(null)
    } catch (err) {
      if (err instanceof PinLocked || err instanceof SignInThrottled) reply.header('retry-after', String(err.retryAfterSec))
      throw err
    }
  })

  app.post('/auth/site/refresh', {
    config: { policy: 'public' },
    schema: {
      tags: TAGS, summary: 'Renew the session without the PIN', security: [],
      description: 'Policy: public (the refresh token is the credential). Each refresh token works once; the answer carries a new one. Presenting a used token again revokes every token of that sign-in (reuse detection). A PIN change or a removed user ends the session. Failures: the uniform 401.',
      body: RefreshBody,
      response: { 200: SiteSessionSchema, ...problemResponses(400, 401, 413, 415, 429) },
    },
  }, async (request, reply) => {
    const org = await tenancy.resolve(request.hostname)
    if (!org) throw new Unauthorized()
    return reply.header('cache-control', 'no-store').send(await signIn.refresh(org, request.body.refreshToken))
  })

  app.post('/auth/site/logout', {
    config: { policy: 'public' },
    schema: {
      tags: TAGS, summary: 'End the session', security: [],
      description: 'Policy: public (the refresh token is the credential). Revokes every refresh token of the sign-in; access tokens already issued run out within 15 minutes. 204 whether or not the token was known.',
      body: RefreshBody,
      response: { 204: { type: 'null', description: 'Signed out.' }, ...problemResponses(400, 413, 415, 429) },
    },
  }, async (request, reply) => {
    const org = await tenancy.resolve(request.hostname)
    if (org) await signIn.logout(org, request.body.refreshToken)
    return reply.code(204).send(null)
  })

  app.get('/.well-known/jwks.json', {
    config: { policy: 'public' },
    schema: {
      tags: TAGS, summary: 'The local public key set', security: [],
      description: 'Policy: public. The ES256 public keys that verify site-PIN tokens of this site (issuer `sitegrid-site-local`): the current key and retired keys whose tokens may still be alive. Never a private key.',
      response: { 200: JwksSchema, ...problemResponses(404) },
    },
  }, async (request, reply) => {
    const org = await tenancy.resolve(request.hostname)
    if (!org) throw new NotFound()
    await signingKeys.current(org.id) // created on first need, so the set is never empty
    return reply.header('cache-control', 'public, max-age=60').send(await signingKeys.publicKeySet(org.id))
  })
}
