// The console's only way to the server: same-origin calls to the public API with the signed-in user's bearer
// token. Cloud mode: the token comes from POST /auth/token (the HttpOnly session cookie goes along by itself);
// site mode: from POST /auth/site/login and /auth/site/refresh. Tokens live in memory; in site mode the one-use
// refresh token is kept in sessionStorage so that reloading the tab keeps the sign-in.
import type { Problem, SessionToken, SiteSession as SiteSessionAnswer } from './api-types.ts'
import { ApiProblem, type Api } from './context.ts'

/** Thrown when there is no sign-in any more (no session, refresh refused): the shell shows the sign-in page. */
export class SignedOut extends Error {
  constructor() {
    super('Signed out')
    this.name = 'SignedOut'
  }
}

export interface Session {
  /** A bearer token valid for at least a little longer; `fresh` asks for a new one (after a 401). */
  token(fresh?: boolean): Promise<string>
  signOut(): Promise<void>
}

/** Ask again this long before the access token expires (the server refreshes at the provider within a minute). */
const MARGIN_MS = 50_000

interface Held {
  token: string
  expiresAtMs: number
}

async function problemOf(res: Response): Promise<ApiProblem> {
  // Not every answer is ours (a proxy's 502): every field may be missing.
  const body = (await res.json().catch(() => ({}))) as Partial<Problem> & { lockedUntil?: string; wouldDelete?: Record<string, number> }
  const errors = (body.errors ?? []).map((e: Partial<NonNullable<Problem['errors']>[number]>) => ({ pointer: e.pointer ?? '', message: e.message ?? '' }))
  return new ApiProblem(res.status, { ...body, errors })
}

/** Shares one request among concurrent callers: a site refresh token works once, so two refreshes must not race. */
function single<T>(fn: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined
  return () => {
    inFlight ??= fn().finally(() => {
      inFlight = undefined
    })
    return inFlight
  }
}

export function createCloudSession(): Session {
  let held: Held | undefined
  const fetchToken = single(async () => {
    const res = await fetch('/auth/token', { method: 'POST', credentials: 'same-origin' })
    if (res.status === 401) throw new SignedOut()
    if (!res.ok) throw await problemOf(res)
    const body = (await res.json()) as SessionToken
    held = { token: body.accessToken, expiresAtMs: Date.parse(body.expiresAt) }
    return body.accessToken
  })
  return {
    async token(fresh = false) {
      if (!fresh && held && held.expiresAtMs - Date.now() > MARGIN_MS) return held.token
      return fetchToken()
    },
    async signOut() {
      held = undefined
      await fetch('/auth/logout', { method: 'POST', credentials: 'same-origin' }).catch(() => undefined)
    },
  }
}

const REFRESH_KEY = 'sitegrid.site.refreshToken'

export interface SiteSession extends Session {
  signIn(email: string, pin: string): Promise<void>
  hasRefreshToken(): boolean
}

export function createSiteSession(storage: Storage = sessionStorage): SiteSession {
  let held: Held | undefined
  const keep = (body: { accessToken: string; expiresAt: string; refreshToken: string }) => {
    held = { token: body.accessToken, expiresAtMs: Date.parse(body.expiresAt) }
    storage.setItem(REFRESH_KEY, body.refreshToken)
    return body.accessToken
  }
  const refresh = single(async () => {
    const refreshToken = storage.getItem(REFRESH_KEY)
    if (!refreshToken) throw new SignedOut()
    const res = await fetch('/auth/site/refresh', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken }) })
    if (res.status === 401 || res.status === 400) {
      storage.removeItem(REFRESH_KEY)
      held = undefined
      throw new SignedOut()
    }
    if (!res.ok) throw await problemOf(res)
    return keep((await res.json()) as SiteSessionAnswer)
  })
  return {
    hasRefreshToken: () => storage.getItem(REFRESH_KEY) !== null,
    async signIn(email, pin) {
      const res = await fetch('/auth/site/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, pin }) })
      if (!res.ok) throw await problemOf(res)
      keep((await res.json()) as SiteSessionAnswer)
    },
    async token(fresh = false) {
      if (!fresh && held && held.expiresAtMs - Date.now() > MARGIN_MS) return held.token
      return refresh()
    },
    async signOut() {
      const refreshToken = storage.getItem(REFRESH_KEY)
      storage.removeItem(REFRESH_KEY)
      held = undefined
      if (refreshToken) {
        await fetch('/auth/site/logout', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken }) }).catch(
          () => undefined,
        )
      }
    },
  }
}

function withQuery(path: string, query?: Record<string, string | number | boolean | undefined>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined && value !== '') params.append(name, String(value))
  const qs = params.toString()
  if (!qs) return path
  return `${path}${path.includes('?') ? '&' : '?'}${qs}`
}

/** The Api of context.ts over a session; `onSignedOut` is called when the sign-in has ended (then the call throws). */
export function createApi(session: Session, onSignedOut: () => void): Api {
  async function authorised(makeRequest: (token: string) => Promise<Response>): Promise<Response> {
    try {
      let res = await makeRequest(await session.token())
      // An access token may have been revoked or expired early: one fresh token, then give up.
      if (res.status === 401) res = await makeRequest(await session.token(true))
      if (res.status === 401) throw new SignedOut()
      return res
    } catch (error) {
      if (error instanceof SignedOut) onSignedOut()
      throw error
    }
  }

  async function answer<T>(res: Response): Promise<T> {
    if (!res.ok) throw await problemOf(res)
    if (res.status === 204) return undefined as T
    const type = res.headers.get('content-type') ?? ''
    return (type.includes('json') ? await res.json() : await res.text()) as T
  }

  return {
    async get<T>(path: string, query?: Record<string, string | number | boolean | undefined>) {
      const url = withQuery(path, query)
      return answer<T>(await authorised((token) => fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } })))
    },
    async send<T>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, options?: { type: string }) {
      const type = options?.type ?? 'application/json'
      const payload = body === undefined ? undefined : options ? String(body) : JSON.stringify(body)
      return answer<T>(
        await authorised((token) =>
          fetch(path, {
            method,
            headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(payload === undefined ? {} : { 'content-type': type }) },
            body: payload,
          }),
        ),
      )
    },
    async upload<T>(path: string, form: FormData, onProgress?: (fraction: number) => void) {
      const send = (token: string) =>
        new Promise<{ status: number; text: string; type: string }>((resolve, reject) => {
          const xhr = new XMLHttpRequest()
          xhr.open('POST', path)
          xhr.setRequestHeader('authorization', `Bearer ${token}`)
          xhr.setRequestHeader('accept', 'application/json')
          xhr.upload.onprogress = (e) => {
            if (e.lengthComputable && onProgress) onProgress(e.loaded / e.total)
          }
          xhr.onload = () => resolve({ status: xhr.status, text: xhr.responseText, type: xhr.getResponseHeader('content-type') ?? '' })
          xhr.onerror = () => reject(new TypeError('upload failed'))
          xhr.send(form)
        })
      let token = await session.token().catch((e: unknown) => {
        if (e instanceof SignedOut) onSignedOut()
        throw e
      })
      let res = await send(token)
      if (res.status === 401) {
        token = await session.token(true).catch((e: unknown) => {
          if (e instanceof SignedOut) onSignedOut()
          throw e
        })
        res = await send(token)
      }
      if (res.status === 401) {
        onSignedOut()
        throw new SignedOut()
      }
      const response = new Response(res.status === 204 ? null : res.text, { status: res.status, headers: { 'content-type': res.type } })
      if (onProgress && response.ok) onProgress(1)
      return answer<T>(response)
    },
  }
}
