// The browser side of the sign-in, played with inject(): cookies in, Set-Cookie out, redirects followed.
import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import { LOGIN_COOKIE, SESSION_COOKIE } from '../../src/auth/sessions/cookies.ts'
import type { IdentityHarness } from './identity-harness.ts'

export function setCookies(res: LightMyRequestResponse): Map<string, string> {
  const raw = res.headers['set-cookie']
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]
  return new Map(lines.map((line) => [line.slice(0, line.indexOf('=')), line]))
}
export const valueOf = (line: string | undefined) => line?.slice(line.indexOf('=') + 1).split(';')[0]

/** Drives GET /auth/login → provider → GET /auth/callback with real redirects; returns every answer on the way. */
export async function signIn(h: IdentityHarness, accountId: string, options: { returnTo?: string; sessionCookie?: string } = {}) {
  h.oidOf(accountId)
  const login = await h.inject(
    { org: h.org },
    { method: 'GET', url: `/auth/login${options.returnTo === undefined ? '' : `?returnTo=${encodeURIComponent(options.returnTo)}`}` },
  )
  assert.equal(login.statusCode, 302, login.body)
  const loginCookie = valueOf(setCookies(login).get(LOGIN_COOKIE))!
  const callbackUrl = await h.op.authorize(login.headers.location as string, h.accountKey(accountId))
  const cookie = [`${LOGIN_COOKIE}=${loginCookie}`, ...(options.sessionCookie ? [`${SESSION_COOKIE}=${options.sessionCookie}`] : [])].join('; ')
  const callback = await h.inject({ org: h.org }, { method: 'GET', url: `${callbackUrl.pathname}${callbackUrl.search}`, headers: { cookie } })
  const session = valueOf(setCookies(callback).get(SESSION_COOKIE))
  return { login, loginCookie, callbackUrl, callback, session }
}

export const origin = (h: IdentityHarness) => `https://${h.org.slug}.localhost`
export const postSession = (
  h: IdentityHarness,
  path: '/auth/token' | '/auth/logout',
  session: string | undefined,
  headers: Record<string, string> = { origin: origin(h) },
) => h.inject({ org: h.org }, { method: 'POST', url: path, headers: { ...headers, ...(session ? { cookie: `${SESSION_COOKIE}=${session}` } : {}) } })
