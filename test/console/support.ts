// Shared set-up for the console's browser tests: a real `sitegrid serve` process (SQLite) serving the built
// console, seeded in-process (schema, organisation, owner key) and then through the public API, and a headless Chromium (Debian's, with playwright-core).
//
//   const c = await siteConsole(t)                      // site mode, owner site user c.owner (PIN sign-in)
//   const page = await c.browser.page()                 // a fresh browser context; page errors collected
//   await signInWithPin(page, c.origin, c.owner)        // through the console's own form; lands on /sites
//   await c.call('POST', '/api/sites', { code: 'S1', name: 'Site 1' })   // seed with the owner API key
//   await shot(page, 'sites')                           // test-results/console/sites.png
//
// Cloud mode: `cloudConsole(t)` also runs a real OpenID provider on loopback (test/support/oidc-provider.ts) and
// serves the organisation at http://{slug}.localhost:{port}; `signInWithProvider(page, c, 'ada')` signs in
// through it, and `c.approve('ada', 'owner')` approves the membership request with the owner key.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { chromium, type Browser, type Page } from 'playwright-core'
import { CLI_ACTOR } from '../../src/identity.ts'
import { systemClock } from '../../src/clock.ts'
import { connectDatabase } from '../../src/db/connect.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createApiKeysService } from '../../src/modules/api-keys/service.ts'
import { createOrgsService } from '../../src/modules/orgs/service.ts'
import { ensureConsoleBuilt } from '../../web/build.ts'
import { KEY_SECRET } from '../harness.ts'
import { httpRequest, startServer, type Server } from '../cli/process.ts'
import { AUDIENCE, CLIENT_ID, CLIENT_SECRET, startSharedProvider } from '../oidc/identity-harness.ts'
import { freePort } from '../postgres.ts'

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync']
export const SCREENSHOT_DIR = join(import.meta.dirname, '..', '..', 'test-results', 'console')

export interface SiteUserLogin {
  email: string
  pin: string
  name: string
  role: string
}

export interface ConsoleServer {
  /** Where the browser opens the console (site mode: the loopback address; cloud: the tenant host). */
  origin: string
  slug: string
  server: Server
  ownerKey: string
  /** Calls the API with `key` (default: the owner key); `{status, body}`. */
  call<T = unknown>(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: T }>
  /** Like call, and throws unless the answer is 2xx. */
  must<T = unknown>(method: string, path: string, body?: unknown, key?: string): Promise<T>
  /** Mints a key with the CLI-created owner key. */
  mintKey(role: 'owner' | 'admin' | 'member', name?: string): Promise<{ plaintext: string; keyId: string }>
  browser: ConsoleBrowser
}

export interface ConsoleBrowser {
  browser: Browser
  /** A page in a fresh context (its own cookies and storage); `errors` collects page errors and CSP refusals. */
  page(options?: { width?: number; height?: number }): Promise<Page & { errors: string[] }>
}

export interface SiteConsole extends ConsoleServer {
  owner: SiteUserLogin
  addSiteUser(role: 'owner' | 'admin' | 'member'): Promise<SiteUserLogin>
}
export interface CloudConsole extends ConsoleServer {
  /** The provider account key for a short name (`ada` → `ada.{slug}`), created on first use. */
  account(name: string): string
  oidOf(name: string): string
  approve(name: string, role: 'owner' | 'admin' | 'member'): Promise<void>
}

async function launch(): Promise<ConsoleBrowser> {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS })
  return {
    browser,
    async page(options = {}) {
      const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: options.height ?? 900 } })
      const page = (await context.newPage()) as Page & { errors: string[] }
      page.setDefaultTimeout(20_000)
      page.errors = []
      page.on('pageerror', (error) => page.errors.push(`pageerror: ${error.message}`))
      // 401/403 answers the console expects (no session yet, a pending membership) log "Failed to load resource".
      page.on('console', (m) => {
        if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) page.errors.push(`console: ${m.text()}`)
      })
      return page
    },
  }
}

/** A console test server's settings: SQLite in `cwd`, fast PIN hashing, a short drain, quiet logs. */
export function consoleServerEnv(cwd: string): Record<string, string> {
  return {
    DATABASE_URL: `sqlite:${join(cwd, 'sitegrid.db')}`,
    SITEGRID_KEY_SECRET: KEY_SECRET,
    SITEGRID_DATA_DIR: cwd,
    SITEGRID_PIN_SCRYPT_LOG2N: '10',
    SITEGRID_SHUTDOWN_GRACE_MS: '500',
    SITEGRID_LOG_LEVEL: 'warn',
  }
}

async function startConsoleServer(
  t: TestContext,
  options: { slug: string; env: Record<string, string>; port?: number; hostHeader?: string },
): Promise<Omit<ConsoleServer, 'browser'>> {
  await ensureConsoleBuilt()
  const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-console-'))
  t.after(() => rmSync(cwd, { recursive: true, force: true }))
  // Seeded in this process (a CLI call costs a Node start-up each): the schema, the organisation, an owner key.
  const env: Record<string, string> = { ...consoleServerEnv(cwd), ...options.env }
  const handle = await connectDatabase(env.DATABASE_URL!, { poolSize: 1 })
  let ownerKey: string
  try {
    await migrateToLatest(handle.db)
    const org = await createOrgsService({ handle, clock: systemClock }).provision(options.slug)
    ownerKey = (
      await createApiKeysService({ handle, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') }).mint(org.id, CLI_ACTOR, {
        role: 'owner',
        name: 'test seed',
        expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      })
    ).plaintext
  } finally {
    await handle.close()
  }
  const server = await startServer({ cwd, env, port: options.port })
  const headers: Record<string, string> = options.hostHeader ? { host: options.hostHeader } : {}
  const call = async <T>(method: string, path: string, body?: unknown, key = ownerKey) => {
    const res = await httpRequest(`${server.url}${path}`, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { ...headers, 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    })
    return { status: res.status, body: (res.body ? JSON.parse(res.body) : undefined) as T }
  }
  const must = async <T>(method: string, path: string, body?: unknown, key?: string) => {
    const res = await call<T>(method, path, body, key)
    if (res.status < 200 || res.status > 299) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body
  }
  return {
    slug: options.slug,
    server,
    ownerKey,
    call,
    must,
    origin: '',
    async mintKey(role, name = `${role} key`) {
      return must<{ plaintext: string; keyId: string }>('POST', '/api/admin/api-keys', {
        role,
        name,
        expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      })
    },
  }
}

/** Stops Chromium before the server, so that no open connection holds the server's shutdown. */
function cleanupInOrder(t: TestContext, browser: ConsoleBrowser, server: Server, extra?: () => Promise<void>) {
  t.after(async () => {
    await browser.browser.close().catch(() => undefined)
    await server.stop()
    await extra?.()
  })
}

/** A site-mode server (SQLite), organisation `plant`, and an owner site user to sign in with. */
export async function siteConsole(t: TestContext): Promise<SiteConsole> {
  const base = await startConsoleServer(t, { slug: 'plant', env: {} })
  const browser = await launch()
  cleanupInOrder(t, browser, base.server)
  let n = 0
  const addSiteUser = async (role: 'owner' | 'admin' | 'member'): Promise<SiteUserLogin> => {
    const login = { email: `${role}${++n}@plant.example`, pin: `${24681350 + n}`, name: `Plant ${role} ${n}`, role }
    await base.must('POST', '/api/site/users', { email: login.email, displayName: login.name, siteRole: role, pin: login.pin })
    return login
  }
  const owner = await addSiteUser('owner')
  return { ...base, origin: base.server.url, browser, owner, addSiteUser }
}

/** A cloud-mode server (SQLite) with a real OpenID provider on loopback; the tenant is at http://{slug}.localhost:{port}. */
export async function cloudConsole(t: TestContext): Promise<CloudConsole> {
  const port = await freePort()
  const shared = await startSharedProvider({ scheme: 'http', port, slots: 1 })
  const slug = shared.takeSlug()
  const base = await startConsoleServer(t, {
    slug,
    port,
    hostHeader: `${slug}.localhost`,
    env: {
      SITEGRID_MODE: 'cloud',
      SITEGRID_OIDC_ISSUER: shared.op.issuer,
      SITEGRID_OIDC_AUDIENCE: AUDIENCE,
      SITEGRID_OIDC_CLIENT_ID: `${CLIENT_ID}-${slug}`,
      SITEGRID_OIDC_CLIENT_SECRET: CLIENT_SECRET,
      SITEGRID_PUBLIC_ORIGIN_SCHEME: 'http',
    },
  })
  const browser = await launch()
  cleanupInOrder(t, browser, base.server, () => shared.stop())
  const account = (name: string) => {
    const key = `${name}.${slug}`
    shared.accounts[key] ??= { oid: `oid-${name}-${slug}`, email: `${name}@example.test`, name: `User ${name}`, org_slug: slug }
    return key
  }
  const oidOf = (name: string) => shared.accounts[account(name)]!.oid
  return {
    ...base,
    origin: `http://${slug}.localhost:${port}`,
    browser,
    account,
    oidOf,
    async approve(name, role) {
      await base.must('POST', `/api/admin/orgs/${slug}/members/${encodeURIComponent(oidOf(name))}/approve`, { role })
    },
  }
}

/** Signs in through the console's PIN form and waits for the shell. */
export async function signInWithPin(page: Page, origin: string, user: SiteUserLogin, path = '/sites'): Promise<void> {
  await page.goto(`${origin}${path}`)
  await page.getByLabel('E-mail').fill(user.email)
  await page.getByLabel('PIN', { exact: true }).fill(user.pin)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
}

/**
 * Signs in through the console's cloud sign-in page: the e-mail field carries the provider's login hint (the test
 * provider has no login form: it signs in whoever the hint names), the button goes to GET /auth/login, the provider
 * and back. Leaves the page wherever the console lands (the shell, or "awaiting approval").
 */
export async function signInWithProvider(page: Page, c: CloudConsole, name: string, path = '/sites'): Promise<void> {
  await page.goto(`${c.origin}${path}`)
  await page.getByLabel('Work e-mail (optional)').fill(c.account(name))
  await page.getByRole('button', { name: 'Sign in with your organisation account' }).click()
  await page.waitForURL((u) => u.origin === c.origin && u.pathname === path)
}

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true })
}

// The console's CSP (script-src 'self') refuses an injected <script> (page.addScriptTag); the DevTools protocol's
// evaluation is not a page script, so axe's source goes in that way.
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

export interface Violation {
  id: string
  impact: string | null
  help: string
  nodes: Array<{ target: string[] }>
}

/** axe-core's serious and critical violations on the page as it is now (test/console/a11y.test.ts walks every page). */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE)
  const { violations, passes } = await page.evaluate(async () => {
    type Results = { violations: Violation[]; passes: unknown[] }
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<Results> } }).axe
    const results = await axe.run(document, { resultTypes: ['violations'] })
    return { violations: results.violations, passes: results.passes.length }
  })
  assert.ok(passes > 0, 'axe ran its rules on the page')
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }))
}
