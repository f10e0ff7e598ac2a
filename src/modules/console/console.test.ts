import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import Fastify from 'fastify'
import { harness, testDialects } from '../../../test/harness.ts'
import { buildConsole, ensureConsoleBuilt } from '../../../web/build.ts'
import { CONSOLE_PATHS } from '../../../web/src/paths.ts'
import { installProblemHandlers } from '../../http/problem.ts'
import { controllerBody } from '../controllers/test-support.ts'
import { CONSOLE_CSP, consoleRoutes, type ConsoleOptions } from './routes.ts'

// The static console is the same on both databases: its own rules are tested once on a bare Fastify with a
// build of its own (no shared folder), and its registration in the whole app on every dialect.
async function bare(options: Partial<ConsoleOptions> & { dir: string }) {
  const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } })
  installProblemHandlers(app)
  await app.register(consoleRoutes, { mode: 'site', browserSignIn: false, ...options })
  return app
}

describe('web console: static serving', () => {
  let dir: string
  let assets: string[]
  before(async () => {
    dir = join(mkdtempSync(join(tmpdir(), 'sitegrid-console-')), 'console')
    await buildConsole(dir)
    assets = readdirSync(join(dir, 'assets'))
  })
  after(() => rmSync(join(dir, '..'), { recursive: true, force: true }))

  it('GET / answers the HTML with a strict CSP (no inline script), nosniff, no framing and no referrer', async () => {
    const app = await bare({ dir })
    const res = await app.inject({ url: '/' })
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8')
    const csp = String(res.headers['content-security-policy'])
    assert.equal(csp, CONSOLE_CSP)
    assert.match(csp, /script-src 'self'(;|$)/)
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/)
    assert.match(csp, /frame-ancestors 'none'/)
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
    assert.equal(res.headers['x-frame-options'], 'DENY')
    assert.equal(res.headers['referrer-policy'], 'no-referrer')
    assert.equal(res.headers['cache-control'], 'no-cache')
    assert.doesNotMatch(res.body, /<script>|<script [^>]*>[^<]/, 'no inline script in the page')
    assert.match(res.body, /<script type="module" src="\/assets\/main\.[\w-]+\.js"><\/script>/)
  })

  it("the page names the server's mode and whether browser sign-in exists", async () => {
    const site = await (await bare({ dir, mode: 'site' })).inject({ url: '/' })
    assert.match(site.body, /<meta name="sitegrid-mode" content="site">/)
    assert.match(site.body, /<meta name="sitegrid-browser-sign-in" content="false">/)
    const cloud = await (await bare({ dir, mode: 'cloud', browserSignIn: true })).inject({ url: '/' })
    assert.match(cloud.body, /<meta name="sitegrid-mode" content="cloud">/)
    assert.match(cloud.body, /<meta name="sitegrid-browser-sign-in" content="true">/)
  })

  it('every console path (history routing) answers the same HTML, and other paths stay 404', async () => {
    const app = await bare({ dir })
    const index = (await app.inject({ url: '/' })).body
    for (const path of CONSOLE_PATHS) {
      const url = path.replace(':code', 'PLANT-1')
      const res = await app.inject({ url })
      assert.equal(res.statusCode, 200, url)
      assert.equal(res.body, index, url)
    }
    assert.equal((await app.inject({ url: '/sites/PLANT-1/' })).statusCode, 200, 'a trailing slash is the same page')
    for (const url of ['/landing', '/sites/A/B', '/admin', '/admin/other']) {
      const res = await app.inject({ url })
      assert.equal(res.statusCode, 404, url)
      assert.equal(res.json().code, 'NotFound', url)
    }
  })

  it('assets are served with their type, an ETag and a year of immutable caching; a matching If-None-Match is 304', async () => {
    const app = await bare({ dir })
    const js = assets.find((a) => a.endsWith('.js'))!
    const css = assets.find((a) => a.endsWith('.css'))!
    const script = await app.inject({ url: `/assets/${js}` })
    assert.equal(script.statusCode, 200)
    assert.equal(script.headers['content-type'], 'text/javascript; charset=utf-8')
    assert.equal(script.headers['cache-control'], 'public, max-age=31536000, immutable')
    assert.equal(script.headers['x-content-type-options'], 'nosniff')
    const style = await app.inject({ url: `/assets/${css}` })
    assert.equal(style.headers['content-type'], 'text/css; charset=utf-8')
    assert.match(style.body, /\.uplot/, "uPlot's stylesheet is bundled, nothing comes from a CDN")
    const again = await app.inject({ url: `/assets/${js}`, headers: { 'if-none-match': String(script.headers.etag) } })
    assert.equal(again.statusCode, 304)
    assert.equal(again.body, '')
    const page = await app.inject({ url: '/' })
    const cached = await app.inject({ url: '/alarms', headers: { 'if-none-match': String(page.headers.etag) } })
    assert.equal(cached.statusCode, 304)
  })

  it("an unknown asset, or a name that is not a built asset's (traversal, other types), is 404", async () => {
    const app = await bare({ dir })
    for (const url of [
      '/assets/main.nothere.js',
      '/assets/..%2Findex.html',
      '/assets/index.html',
      '/assets/main.js',
      '/assets/%2e%2e%2f%2e%2e%2fpackage.json',
    ]) {
      const res = await app.inject({ url })
      assert.equal(res.statusCode, 404, url)
    }
  })

  it('without a build the console answers a clear 503 ConsoleNotBuilt problem, and the server keeps running', async () => {
    const app = await bare({ dir: join(dir, '..', 'missing') })
    for (const url of ['/', '/alarms', '/sites/A']) {
      const res = await app.inject({ url })
      assert.equal(res.statusCode, 503, url)
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
      assert.equal(res.json().code, 'ConsoleNotBuilt')
      assert.match(res.json().detail, /npm run build:console/)
    }
    assert.equal((await app.inject({ url: '/assets/main.abc.js' })).statusCode, 404)
  })
})

for (const dialect of testDialects()) {
  describe(`${dialect}: web console in the application`, () => {
    before(async () => {
      await ensureConsoleBuilt()
    })

    it('GET / needs no credential and answers the console on any host; the API beside it still requires one', async (t) => {
      const h = await harness(t, dialect)
      const { org } = await h.orgWithKey()
      const res = await h.inject({ org }, { url: '/' })
      assert.equal(res.statusCode, 200)
      assert.match(String(res.headers['content-type']), /^text\/html/)
      assert.equal(res.headers['content-security-policy'], CONSOLE_CSP)
      assert.match(res.body, /<meta name="sitegrid-mode" content="site">/)
      assert.equal((await h.inject(undefined, { url: '/alarms' })).statusCode, 200, 'the page has no data: any host gets it')
      assert.equal((await h.inject({ org }, { url: '/api/me' })).statusCode, 401)
      assert.equal((await h.inject({ org }, { url: '/landing' })).statusCode, 404)
    })

    it('a problem beside the console (unknown path, no credential, bad input) is application/problem+json with nosniff, never HTML', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('admin')
      const answers = [
        await h.inject({ org }, { url: '/api/<img src=x onerror=alert(1)>' }),
        await h.inject({ org }, { url: '/<script>alert(1)</script>' }),
        await h.inject({ org }, { url: '/api/me' }),
        await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/sites', payload: { code: '<b>x</b>', name: '' } }),
        await h.inject(
          { org, apiKey: key },
          { method: 'POST', url: '/api/sites', headers: { 'content-type': 'text/html' }, payload: '<script>alert(1)</script>' },
        ),
      ]
      // A problem stored under an Idempotency-Key and replayed is sent with the same header.
      const unknownSite = {
        method: 'POST',
        url: '/api/sites/NOPE/controllers',
        headers: { 'idempotency-key': 'k-nosniff' },
        payload: controllerBody(),
      } as const
      answers.push(await h.inject({ org, apiKey: key }, unknownSite))
      const replayed = await h.inject({ org, apiKey: key }, unknownSite)
      assert.equal(replayed.headers['idempotent-replayed'], 'true')
      answers.push(replayed)
      assert.deepEqual(
        answers.map((res) => [res.statusCode, res.headers['content-type'], res.headers['x-content-type-options']]),
        [
          [404, 'application/problem+json; charset=utf-8', 'nosniff'],
          [404, 'application/problem+json; charset=utf-8', 'nosniff'],
          [401, 'application/problem+json; charset=utf-8', 'nosniff'],
          [400, 'application/problem+json; charset=utf-8', 'nosniff'],
          [415, 'application/problem+json; charset=utf-8', 'nosniff'],
          [404, 'application/problem+json; charset=utf-8', 'nosniff'],
          [404, 'application/problem+json; charset=utf-8', 'nosniff'],
        ],
      )
    })

    it('the console routes are left out of the OpenAPI document', async (t) => {
      const h = await harness(t, dialect)
      const doc = (await h.inject(undefined, { url: '/openapi.json' })).json() as { paths: Record<string, unknown> }
      assert.equal(
        Object.keys(doc.paths).some((p) => p === '/' || p.startsWith('/assets') || p === '/alarms'),
        false,
      )
      assert.ok(doc.paths['/api/me'], '/api/me is documented')
    })
  })
}
