import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import { Unauthorized } from '../../errors/domain-error.ts'
import type { Org } from '../../identity.ts'
import type { Memberships, PlatformAdminList } from '../oidc/accounts.ts'
import { buildAuthorizationRequest, readAuthorizationCallback } from '../oidc/code-flow.ts'
import { AuthorizationCallbackRejected, InvalidBearerToken, InvalidIdToken, OidcTokenRequestFailed } from '../oidc/errors.ts'
import { verifyIdToken } from '../oidc/id-token.ts'
import type { RelyingParty } from '../oidc/relying-party.ts'
import { safeReturnTo } from '../oidc/return-to.ts'
import { exchangeCode, refresh, type OidcTokenSet } from '../oidc/token-endpoint.ts'
import { IdentityProviderUnreachable, SignInFailed } from './errors.ts'
import { cookieDigest, createSealer, newCookieValue } from './seal.ts'
import {
  deleteExpiredPendingLogins,
  deleteExpiredSessionsOfAccount,
  deleteSession,
  findSession,
  insertPendingLogin,
  insertSession,
  takePendingLogin,
  updateSessionTokens,
} from './store.ts'

export const LOGIN_TTL_MS = 10 * 60_000
export const SESSION_TTL_MS = 12 * 3_600_000
/** The access token handed out by POST /auth/token is refreshed when it has less than this left. */
export const REFRESH_MARGIN_MS = 60_000
const DEFAULT_ACCESS_TTL_MS = 5 * 60_000

export interface SessionToken {
  accessToken: string
  expiresAt: number
}

/**
 * Browser sessions (spec 5 rule 6): the authorization-code flow with PKCE, then a server-side session row
 * per sign-in holding the provider's tokens sealed. Nothing but the random cookie reaches the browser.
 */
export function createSessionsService(deps: {
  handle: DatabaseHandle
  clock: Clock
  relyingParty: RelyingParty
  client: { id: string; secret: string }
  members: Pick<Memberships, 'accessOf' | 'recordSignIn'>
  platformAdmins: PlatformAdminList
  keySecret: Buffer
  log: FastifyBaseLogger
}) {
  const { handle, clock, relyingParty, client, members, platformAdmins, log } = deps
  const db = handle.db
  const sealer = createSealer(deps.keySecret)
  const tokenClient = { tokenEndpoint: relyingParty.metadata.tokenEndpoint, clientId: client.id, clientSecret: client.secret }
  const idTokenOptions = {
    issuer: relyingParty.metadata.issuer,
    clientId: client.id,
    keySet: relyingParty.keySet,
    clock: relyingParty.jwtClock,
    clockToleranceSec: relyingParty.config.clockSkewSec,
  }

  /**
   * When the session's access token is refreshed: after the provider's `expires_in`, 5 minutes when it sent none it
   * could state (token-endpoint.ts), never after the session ends (`sessionEnd`): a hostile `expires_in` of 1e300 made
   * a time no bigint column or Date holds (a 500 at sign-in or at POST /auth/token).
   */
  const accessExpiry = (tokens: OidcTokenSet, now: number, sessionEnd: number) =>
    Math.min(now + (tokens.expiresInSec === undefined ? DEFAULT_ACCESS_TTL_MS : tokens.expiresInSec * 1000), sessionEnd)
  const context = (org: Org, id: string, field: string) => `${org.id}\u0000${id}\u0000${field}`

  async function requestTokens<T>(call: () => Promise<T>, what: string): Promise<T> {
    try {
      return await call()
    } catch (error) {
      if (error instanceof OidcTokenRequestFailed && error.error === 'unavailable') {
        throw new IdentityProviderUnreachable(error)
      }
      throw new SignInFailed(`The identity provider refused the ${what}.`, error)
    }
  }

  return {
    /** Starts a sign-in: the pending login is stored server-side under a fresh cookie value. */
    async startLogin(
      org: Org,
      input: { origin: string; returnTo: unknown; loginHint?: string | undefined },
    ): Promise<{ cookie: string; authorizeUrl: string }> {
      const redirectUri = `${input.origin}/auth/callback`
      const request = buildAuthorizationRequest({
        authorizationEndpoint: relyingParty.metadata.authorizationEndpoint,
        clientId: client.id,
        redirectUri,
        ...(input.loginHint === undefined ? {} : { loginHint: input.loginHint }),
      })
      const cookie = newCookieValue()
      const now = clock.now()
      await deleteExpiredPendingLogins(db, org.id, now)
      await insertPendingLogin(db, {
        org_id: org.id,
        id: cookieDigest(cookie),
        state: request.state,
        nonce: request.nonce,
        verifier: sealer.seal(request.verifier, context(org, cookieDigest(cookie), 'verifier')),
        redirect_uri: redirectUri,
        return_to: safeReturnTo(input.returnTo) ?? '/',
        expires_at: now + LOGIN_TTL_MS,
      })
      return { cookie, authorizeUrl: request.url.toString() }
    },

    /**
     * Completes a sign-in: state, issuer and nonce checked, the code redeemed with the PKCE verifier, the
     * access token validated like any bearer, the membership request recorded, and a NEW session created
     * (a session cookie the browser already had is ended: no fixation). Throws SignInFailed or ServiceUnavailable.
     */
    async completeLogin(org: Org, input: { loginCookie: string | undefined; previousSession: string | undefined; query: URLSearchParams }) {
      if (input.loginCookie === undefined) throw new SignInFailed('No sign-in is in progress in this browser.')
      const loginId = cookieDigest(input.loginCookie)
      const pending = await takePendingLogin(db, org.id, loginId)
      const now = clock.now()
      if (!pending || pending.expires_at <= now) throw new SignInFailed('The sign-in attempt expired or was already used.')
      let code: string
      try {
        code = readAuthorizationCallback(input.query, {
          state: pending.state,
          issuer: relyingParty.metadata.issuer,
          isIssParameterSupported: relyingParty.metadata.isIssParameterSupported,
        })
      } catch (error) {
        if (error instanceof AuthorizationCallbackRejected) {
          throw new SignInFailed(
            error.reason === 'ProviderError'
              ? 'The identity provider did not sign you in.'
              : 'The answer from the identity provider does not match this sign-in.',
            error,
          )
        }
        throw error
      }
      const verifier = sealer.open(pending.verifier, context(org, loginId, 'verifier'))
      if (verifier === undefined) throw new SignInFailed('The sign-in attempt could not be read.')
      const tokens = await requestTokens(() => exchangeCode({ ...tokenClient, code, verifier, redirectUri: pending.redirect_uri }), 'authorization code')
      let user
      let identity
      try {
        user = await verifyIdToken(tokens.idToken ?? '', { ...idTokenOptions, nonce: pending.nonce })
        identity = await relyingParty.validateBearer(tokens.accessToken)
      } catch (error) {
        if (error instanceof InvalidIdToken || error instanceof InvalidBearerToken) {
          log.debug({ event: 'auth.sign_in_rejected', reason: error.reason, claim: error.claim }, 'sign-in tokens rejected')
          throw new SignInFailed('The tokens from the identity provider could not be verified.', error)
        }
        throw error
      }
      if (identity.sub !== user.sub) throw new SignInFailed('The tokens from the identity provider disagree on who signed in.')
      if (identity.orgSlug !== org.slug) throw new SignInFailed('The identity provider signed you in for another organisation.')
      // A platform admin signing in at a host is not asking to join it (as on the bearer path).
      const access = (await platformAdmins.isPlatformAdmin(identity.oid))
        ? ((await members.accessOf(org.id, identity.oid)) ?? { status: 'pending' as const })
        : await members.recordSignIn(org.id, { oid: identity.oid, email: user.email ?? identity.email, name: user.name ?? identity.name })

      const cookie = newCookieValue()
      const id = cookieDigest(cookie)
      const created = clock.now()
      await db.transaction().execute(async (trx) => {
        if (input.previousSession !== undefined) await deleteSession(trx, org.id, cookieDigest(input.previousSession))
        await deleteExpiredSessionsOfAccount(trx, org.id, identity.oid, created)
        await insertSession(trx, {
          org_id: org.id,
          id,
          account_id: identity.oid,
          sub: identity.sub,
          access_token: sealer.seal(tokens.accessToken, context(org, id, 'access')),
          access_expires_at: accessExpiry(tokens, created, created + SESSION_TTL_MS),
          refresh_token: tokens.refreshToken === undefined ? null : sealer.seal(tokens.refreshToken, context(org, id, 'refresh')),
          created_at: created,
          expires_at: created + SESSION_TTL_MS,
        })
      })
      return { cookie, maxAgeSec: SESSION_TTL_MS / 1000, returnTo: pending.return_to, membership: access.status }
    },

    /** The session's access token, refreshed at the provider when it is about to expire; throws the uniform Unauthorized. */
    async tokenFor(org: Org, sessionCookie: string | undefined): Promise<SessionToken> {
      if (sessionCookie === undefined) throw new Unauthorized()
      const id = cookieDigest(sessionCookie)
      const row = await findSession(db, org.id, id)
      const now = clock.now()
      if (!row || row.expires_at <= now) throw new Unauthorized()
      if (row.access_expires_at - now > REFRESH_MARGIN_MS) {
        const accessToken = sealer.open(row.access_token, context(org, id, 'access'))
        if (accessToken === undefined) throw new Unauthorized()
        return { accessToken, expiresAt: row.access_expires_at }
      }
      const refreshToken = row.refresh_token === null ? undefined : sealer.open(row.refresh_token, context(org, id, 'refresh'))
      if (refreshToken === undefined) {
        await deleteSession(db, org.id, id)
        throw new Unauthorized()
      }
      let renewed: OidcTokenSet
      try {
        renewed = await refresh({ ...tokenClient, refreshToken })
        const identity = await relyingParty.validateBearer(renewed.accessToken)
        // OIDC Core §12.2: a refresh never changes who the session is.
        if (identity.sub !== row.sub || identity.oid !== row.account_id || identity.orgSlug !== org.slug)
          throw new InvalidBearerToken('ERR_JWT_CLAIM_VALIDATION_FAILED', { claim: 'sub' })
      } catch (error) {
        // Another process may have refreshed first with a rotating refresh token: use its result.
        const latest = await findSession(db, org.id, id)
        if (latest && latest.access_expires_at - clock.now() > REFRESH_MARGIN_MS) {
          const accessToken = sealer.open(latest.access_token, context(org, id, 'access'))
          if (accessToken !== undefined) return { accessToken, expiresAt: latest.access_expires_at }
        }
        if (error instanceof OidcTokenRequestFailed && error.error === 'unavailable') {
          throw new IdentityProviderUnreachable(error)
        }
        log.info({ event: 'auth.session_refresh_failed', reason: error instanceof Error ? error.name : 'unknown' }, 'session ended: refresh refused')
        await deleteSession(db, org.id, id)
        throw new Unauthorized()
      }
      const at = clock.now()
      const expiresAt = accessExpiry(renewed, at, row.expires_at)
      const result = await updateSessionTokens(db, org.id, id, {
        access_token: sealer.seal(renewed.accessToken, context(org, id, 'access')),
        access_expires_at: expiresAt,
        refresh_token: renewed.refreshToken === undefined ? row.refresh_token : sealer.seal(renewed.refreshToken, context(org, id, 'refresh')),
      })
      // Ended (logout, revocation) while we were at the provider: the new token is not handed out.
      if (Number(result.numUpdatedRows) === 0) throw new Unauthorized()
      return { accessToken: renewed.accessToken, expiresAt }
    },

    /** Ends the session if there is one; idempotent. */
    async logout(org: Org, sessionCookie: string | undefined): Promise<void> {
      if (sessionCookie === undefined) return
      await deleteSession(db, org.id, cookieDigest(sessionCookie))
    },
  }
}

export type SessionsService = ReturnType<typeof createSessionsService>
