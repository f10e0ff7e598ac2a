// Issue 4, issue 29: an authenticated GET /api/admin/api-keys with an OIDC bearer token beside the same GET with an
// API key, on the same server in the same run (the aim: the bearer path's server CPU per request within 1.2× of
// the key path's). A real OpenID provider on loopback (test/support/oidc-provider.ts) issues the access token (an
// RS256 JWT); the server validates it locally against the provider's cached key set (a token verified once is
// remembered until it expires or the key set changes, src/auth/oidc/bearer.ts) and takes the role from the
// membership table (cached per invalidation generation): no call to the provider on the request path. Every figure
// BENCH_RUNS times: the median, the spread and the 1-minute load.
import { randomBytes } from 'node:crypto'
import { appRoleUrl, ensureAppRole } from '../test/postgres.ts'
import { startOidcProvider } from '../test/support/oidc-provider.ts'
import { benchRuns, type HttpFigures, loadSpread, measureHttp, printHttpFigure, startBenchServer, stopBenchServer } from './lib.ts'

const AUDIENCE = 'https://api.sitegrid.bench'

export async function benchBearer(dialects: Array<{ name: string; url?: string }>, seconds: number): Promise<void> {
  const path = '/api/admin/api-keys'
  const { figures, loads } = await benchRuns(async () => {
    const run: HttpFigures = {}
    for (const dialect of dialects) {
      const slug = `bearer-${randomBytes(3).toString('hex')}`
      const account = { oid: `oid-bench-${slug}`, email: 'bench@example.test', name: 'Bench', org_slug: slug }
      const op = await startOidcProvider({
        clients: [{ client_id: 'bench', client_secret: randomBytes(16).toString('hex'), redirect_uris: [`https://${slug}.localhost/auth/callback`] }],
        accounts: { bench: account },
        audience: AUDIENCE,
      })
      try {
        // PostgreSQL: the application runs as the app role, so that row-level security applies (a superuser passes it).
        if (dialect.url) await ensureAppRole(dialect.url)
        const app = await startBenchServer('app.ts', {
          ...(dialect.url ? { BENCH_DATABASE_URL: dialect.url, BENCH_DATABASE_APP_URL: appRoleUrl(dialect.url) } : {}),
          BENCH_OIDC_ISSUER: op.issuer,
          BENCH_OIDC_AUDIENCE: AUDIENCE,
          BENCH_ORG_SLUG: slug,
          BENCH_OIDC_ADMIN_OID: account.oid,
        })
        const host = app.info.host!
        const token = await op.issueAccessToken('bench')
        try {
          await measureHttp(run, `${dialect.name} API-key GET`, app, path, () => ({ host, 'x-api-key': app.info.key! }), seconds, false)
          await measureHttp(run, `${dialect.name} bearer GET`, app, path, () => ({ host, authorization: `Bearer ${token}` }), seconds, false)
          await measureHttp(
            run,
            `${dialect.name} bad signature 401`,
            app,
            path,
            () => ({ host, authorization: `Bearer ${token.slice(0, -4)}AAAA` }),
            seconds,
            false,
          )
        } finally {
          await stopBenchServer(app)
        }
      } finally {
        await op.stop()
      }
    }
    return run
  })
  console.log(`# bearer: ${loadSpread(loads)}; server CPU µs per request, and the API-key GET's CPU ÷ this one (aim ≥ 0.83x, i.e. within 1.2x)`)
  for (const d of dialects)
    for (const what of ['API-key GET', 'bearer GET', 'bad signature 401']) printHttpFigure(figures, `${d.name} ${what}`, `${d.name} API-key GET`)
}
