import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { createApi, createCloudSession, createSiteSession, SignedOut } from '../../web/src/api.ts'
import { ApiProblem } from '../../web/src/context.ts'

// The console's API client (web/src/api.ts) without a browser: fetch is replaced by a script of answers.
// Site refresh tokens work once (a reuse ends the sign-in), so concurrent calls must share one refresh.

type Answer = { status: number; body?: unknown; type?: string }
const realFetch = globalThis.fetch
afterEach(() => {
  globalThis.fetch = realFetch
})

function script(handler: (url: string, init: RequestInit) => Answer | Promise<Answer>): Array<{ url: string; init: RequestInit }> {
  const calls: Array<{ url: string; init: RequestInit }> = []
  globalThis.fetch = (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = String(input)
    calls.push({ url, init })
    const answer = await handler(url, init)
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
      headers: { 'content-type': answer.type ?? 'application/json' },
    })
  }) as typeof fetch
  return calls
}

function memoryStorage(): Storage {
  const map = new Map<string, string>()
  return {
    get length() {
      return map.size
    },
    clear: () => map.clear(),
    key: (i) => [...map.keys()][i] ?? null,
    getItem: (k) => map.get(k) ?? null,
    setItem: (k, v) => {
      map.set(k, v)
    },
    removeItem: (k) => {
      map.delete(k)
    },
  }
}

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString()

describe('console API client', () => {
  it('site mode: concurrent calls with an expired access token share one refresh, and the new refresh token is kept', async () => {
    const storage = memoryStorage()
    storage.setItem('sitegrid.site.refreshToken', 'srt_one')
    let n = 0
    const calls = script(async (url, init) => {
      if (url === '/auth/site/refresh') {
        await new Promise((r) => setTimeout(r, 20))
        assert.deepEqual(JSON.parse(String(init.body)), { refreshToken: 'srt_one' })
        return { status: 200, body: { accessToken: `at-${++n}`, expiresAt: inMs(900_000), refreshToken: 'srt_two' } }
      }
      return { status: 200, body: { auth: (init.headers as Record<string, string>).authorization } }
    })
    const api = createApi(createSiteSession(storage), () => assert.fail('not signed out'))
    const answers = await Promise.all([api.get<{ auth: string }>('/api/a'), api.get<{ auth: string }>('/api/b'), api.get<{ auth: string }>('/api/c')])
    assert.equal(calls.filter((c) => c.url === '/auth/site/refresh').length, 1)
    assert.deepEqual(
      answers.map((a) => a.auth),
      ['Bearer at-1', 'Bearer at-1', 'Bearer at-1'],
    )
    assert.equal(storage.getItem('sitegrid.site.refreshToken'), 'srt_two')
    await api.get('/api/d')
    assert.equal(calls.filter((c) => c.url === '/auth/site/refresh').length, 1, 'a valid access token is reused')
  })

  it('site mode: a refused refresh signs out (the shell shows the sign-in) and forgets the refresh token', async () => {
    const storage = memoryStorage()
    storage.setItem('sitegrid.site.refreshToken', 'srt_used')
    script((url) => (url === '/auth/site/refresh' ? { status: 401, body: { code: 'Unauthorized' } } : { status: 200, body: {} }))
    let signedOut = 0
    const api = createApi(createSiteSession(storage), () => {
      signedOut++
    })
    await assert.rejects(api.get('/api/x'), SignedOut)
    assert.equal(signedOut, 1)
    assert.equal(storage.getItem('sitegrid.site.refreshToken'), null)
  })

  it('cloud mode: the token comes from POST /auth/token and is asked again less than a minute before it expires', async () => {
    let expiresIn = 30_000
    let n = 0
    const calls = script((url) =>
      url === '/auth/token' ? { status: 200, body: { accessToken: `t${++n}`, tokenType: 'Bearer', expiresAt: inMs(expiresIn) } } : { status: 200, body: {} },
    )
    const api = createApi(createCloudSession(), () => assert.fail('not signed out'))
    await api.get('/api/x')
    await api.get('/api/y')
    assert.equal(calls.filter((c) => c.url === '/auth/token').length, 2, '30 s left: asked again')
    expiresIn = 15 * 60_000
    await api.get('/api/z')
    await api.get('/api/w')
    assert.equal(calls.filter((c) => c.url === '/auth/token').length, 3, '15 min left: kept')
    assert.equal(calls.find((c) => c.url === '/auth/token')!.init.method, 'POST')
    assert.equal((calls.at(-1)!.init.headers as Record<string, string>).authorization, 'Bearer t3')
  })

  it('a 401 from the API gets one fresh token and a retry; a second 401 signs out', async () => {
    let apiCalls = 0
    script((url) => {
      if (url === '/auth/token') return { status: 200, body: { accessToken: 't', tokenType: 'Bearer', expiresAt: inMs(600_000) } }
      apiCalls++
      return apiCalls === 1 ? { status: 401, body: { code: 'Unauthorized' } } : { status: 200, body: { ok: true } }
    })
    const api = createApi(createCloudSession(), () => assert.fail('not signed out'))
    assert.deepEqual(await api.get('/api/x'), { ok: true })
    script((url) =>
      url === '/auth/token' ? { status: 200, body: { accessToken: 't', tokenType: 'Bearer', expiresAt: inMs(600_000) } } : { status: 401, body: {} },
    )
    let signedOut = false
    const api2 = createApi(createCloudSession(), () => {
      signedOut = true
    })
    await assert.rejects(api2.get('/api/x'), SignedOut)
    assert.equal(signedOut, true)
  })

  it('a problem answer becomes an ApiProblem whose field errors carry the pointer and the message', async () => {
    script((url) =>
      url === '/auth/token'
        ? { status: 200, body: { accessToken: 't', tokenType: 'Bearer', expiresAt: inMs(600_000) } }
        : {
            status: 400,
            type: 'application/problem+json',
            body: {
              code: 'ValidationFailed',
              detail: 'The body is not valid',
              errors: [{ in: 'body', pointer: '/name', message: 'must NOT have fewer than 1 characters' }],
            },
          },
    )
    const api = createApi(createCloudSession(), () => assert.fail('not signed out'))
    const error = await api.send('POST', '/api/admin/api-keys', { name: '' }).catch((e: unknown) => e)
    assert.ok(error instanceof ApiProblem)
    assert.equal(error.status, 400)
    assert.equal(error.code, 'ValidationFailed')
    assert.deepEqual(error.errors, [{ pointer: '/name', message: 'must NOT have fewer than 1 characters' }])
  })
})
