// Issue 4: an authenticated GET /api/admin/api-keys with an OIDC bearer token against bare node:http in the same
// run, beside the API-key figure. A real OpenID provider on loopback (test/support/oidc-provider.ts) issues the
// access token (an RS256 JWT); the server validates it locally against the provider's cached key set and recomputes
// the role from the membership table on every request (no call to the provider on the request path).
import { randomBytes } from 'node:crypto'
import { startOidcProvider } from '../test/support/oidc-provider.ts'
import { ratio, requestsPerSecond, startBenchServer, stopBenchServer } from './lib.ts'

const AUDIENCE = 'https://api.sitegrid.bench'

export async function benchBearer(dialects: Array<{ name: string; url?: string }>, seconds: number): Promise<void> {
  const bare = await startBenchServer('bare.ts')
  const base = await requestsPerSecond(`http://127.0.0.1:${bare.info.port}/api/admin/api-keys`, { 'x-api-key': 'x' }, seconds)
  await stopBenchServer(bare)
  console.log(`bare node:http            ${base.rps.toFixed(0)} req/s  p50 ${base.p50} ms  p99 ${base.p99} ms`)
  for (const dialect of dialects) {
    const slug = `bearer-${randomBytes(3).toString('hex')}`
    const account = { oid: `oid-bench-${slug}`, email: 'bench@example.test', name: 'Bench', org_slug: slug }
    const op = await startOidcProvider({
      clients: [{ client_id: 'bench', client_secret: randomBytes(16).toString('hex'), redirect_uris: [`https://${slug}.localhost/auth/callback`] }],
      accounts: { bench: account },
      audience: AUDIENCE,
    })
    try {
      const app = await startBenchServer('app.ts', {
        ...(dialect.url ? { BENCH_DATABASE_URL: dialect.url } : {}),
        BENCH_OIDC_ISSUER: op.issuer,
        BENCH_OIDC_AUDIENCE: AUDIENCE,
        BENCH_ORG_SLUG: slug,
        BENCH_OIDC_ADMIN_OID: account.oid,
      })
      const url = `http://127.0.0.1:${app.info.port}/api/admin/api-keys`
      const token = await op.issueAccessToken('bench')
      const good = await requestsPerSecond(url, { host: app.info.host!, authorization: `Bearer ${token}` }, seconds)
      const forged = await requestsPerSecond(url, { host: app.info.host!, authorization: `Bearer ${token.slice(0, -4)}AAAA` }, seconds)
      await stopBenchServer(app)
      console.log(
        `${dialect.name.padEnd(8)} bearer GET        ${good.rps.toFixed(0)} req/s  p50 ${good.p50} ms  vs bare ${ratio(good.rps, base.rps)}  (non-2xx ${good.non2xx})`,
      )
      console.log(
        `${dialect.name.padEnd(8)} bad signature 401 ${forged.rps.toFixed(0)} req/s  vs bare ${ratio(forged.rps, base.rps)}  (non-2xx ${forged.non2xx}; refused at the signature check)`,
      )
    } finally {
      await op.stop()
    }
  }
}
