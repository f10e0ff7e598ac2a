import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { chromium } from 'playwright-core'
import { testDialects } from '../harness.ts'
import { freePort } from '../postgres.ts'
import { identityHarness, startSharedProvider } from './identity-harness.ts'

// One sign-in in a real headless Chromium, redirects and cookies handled by the browser itself.
// `__Host-` cookies must be Secure; Chromium treats http://localhost and http://*.localhost as potentially
// trustworthy origins and accepts Secure (and so `__Host-`) cookies from them, so the test serves the
// tenant at http://{slug}.localhost:{port} (SITEGRID_PUBLIC_ORIGIN_SCHEME=http) and the cookie attributes
// are exactly those of production. Chromium resolves *.localhost to loopback without DNS.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync']

// Chromium is the slowest part of the suite: it runs once, on the first dialect selected. The session
// store it exercises runs on both dialects in src/auth/sessions/*.test.ts.
for (const dialect of testDialects().slice(0, 1)) {
  describe(`${dialect}: browser sign-in in headless Chromium`, () => {
    it('login → provider → callback → /auth/token → API call → logout, with an HttpOnly __Host- cookie the page cannot read', async (t) => {
      const port = await freePort()
      const shared = await startSharedProvider({ scheme: 'http', port, slots: 1 })
      t.after(() => shared.stop())
      const h = await identityHarness(t, dialect, shared)
      await h.activate('ada', 'admin')
      await h.app.listen({ host: '127.0.0.1', port })
      const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS })
      // Closed here, not in t.after: the app's close (registered earlier) would wait on Chromium's open connections.
      try {
        const context = await browser.newContext()
        const page = await context.newPage()
        const origin = `http://${h.org.slug}.localhost:${port}`

        const response = await page.goto(
          `${origin}/auth/login?returnTo=${encodeURIComponent('/landing?x=1')}&loginHint=${encodeURIComponent(h.accountKey('ada'))}`,
        )
        assert.equal(new URL(page.url()).pathname, '/landing', `ended at ${page.url()}`)
        assert.equal(new URL(page.url()).search, '?x=1')
        assert.equal(response?.status(), 404, "the landing page is the console's, not served by this test")

        const cookies = await context.cookies(origin)
        const session = cookies.find((c) => c.name === '__Host-sitegrid-session')
        assert.ok(session, `Chromium kept the session cookie (got ${cookies.map((c) => c.name).join(', ')})`)
        assert.deepEqual([session.httpOnly, session.secure, session.sameSite, session.path], [true, true, 'Lax', '/'])
        assert.equal(
          cookies.some((c) => c.name === '__Host-sitegrid-login'),
          false,
          'the pending-login cookie was cleared',
        )

        const result = await page.evaluate(async () => {
          const token = await fetch('/auth/token', { method: 'POST' })
          const { accessToken } = (await token.json()) as { accessToken: string }
          const keys = await fetch('/api/admin/api-keys', { headers: { authorization: `Bearer ${accessToken}` } })
          const logout = await fetch('/auth/logout', { method: 'POST' })
          const after = await fetch('/auth/token', { method: 'POST' })
          return { token: token.status, keys: keys.status, logout: logout.status, after: after.status, visible: document.cookie }
        })
        assert.deepEqual(result, { token: 200, keys: 200, logout: 204, after: 401, visible: '' })
        assert.equal((await h.handle.db.selectFrom('sessions').select('id').where('org_id', '=', h.org.id).execute()).length, 0)
      } finally {
        await browser.close()
      }
    })
  })
}
