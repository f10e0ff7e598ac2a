// Issue 30: an edge gateway's configuration poll with an unchanged ETag (304) against the authenticated key-list GET,
// server CPU per request in the same run (the figure: ≤ 1.5× the key list), BENCH_RUNS times (median, spread, load). The site holds BENCH_EDGE_CONTROLLERS
// (20) controllers on the polled edge with BENCH_EDGE_INSTANCES (10) instances each, so that a full build would show.
import { appRoleUrl, ensureAppRole } from '../test/postgres.ts'
import { benchRuns, httpRequest, type HttpFigures, loadSpread, measureHttp, printHttpFigure, startBenchServer, stopBenchServer } from './lib.ts'

export async function benchEdges(dialects: Array<{ name: string; url?: string }>, seconds: number): Promise<void> {
  const controllers = Number(process.env.BENCH_EDGE_CONTROLLERS ?? 20)
  const instances = Number(process.env.BENCH_EDGE_INSTANCES ?? 10)
  for (const dialect of dialects) {
    // PostgreSQL: the application runs as the app role, so that row-level security applies (a superuser passes it).
    if (dialect.url) await ensureAppRole(dialect.url)
    const app = await startBenchServer('app.ts', dialect.url ? { BENCH_DATABASE_URL: dialect.url, BENCH_DATABASE_APP_URL: appRoleUrl(dialect.url) } : {})
    try {
      const origin = `http://127.0.0.1:${app.info.port}`
      const get = { host: app.info.host!, 'x-api-key': app.info.key! }
      const send = async (method: string, path: string, body?: unknown) => {
        const res = await httpRequest(`${origin}${path}`, method, get, body)
        if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`)
        return res
      }
      await send('POST', '/api/sites', { code: 'BENCH', name: 'Bench plant' })
      for (let c = 0; c < controllers; c++) {
        const body = {
          name: `PLC ${c}`,
          platform: 1,
          assetNumber: `A-${c}`,
          connection: { protocol: 'EtherNet/IP', ipAddress: `10.0.0.${c + 1}`, cipPath: '1,0' },
        }
        const { id } = JSON.parse((await send('POST', '/api/sites/BENCH/controllers', body)).text) as { id: string }
        await send('POST', `/api/sites/BENCH/controllers/${id}/assign`, { edgeId: 'GW-1' })
        for (let i = 0; i < instances; i++) {
          const tagMappings = { speed: `P${c}_${i}.Speed`, current: `P${c}_${i}.Current`, running: `P${c}_${i}.Run` }
          await send('POST', '/api/sites/BENCH/instances', {
            id: `P${c}-${i}`,
            name: `Pump ${c}.${i}`,
            typeId: 'pump',
            assetNumber: `AN-${c}-${i}`,
            controllerId: id,
            tagMappings,
          })
        }
      }
      const etag = String((await send('GET', '/api/sites/BENCH/edges/GW-1/config')).headers.etag)
      const { figures, loads } = await benchRuns(async () => {
        const run: HttpFigures = {}
        await measureHttp(run, 'key list', app, '/api/admin/api-keys', () => get, seconds, false)
        await measureHttp(run, '304', app, '/api/sites/BENCH/edges/GW-1/config', () => ({ ...get, 'if-none-match': etag }), seconds, false)
        await measureHttp(run, '200', app, '/api/sites/BENCH/edges/GW-1/config', () => get, seconds, false)
        return run
      })
      console.log(
        `# ${dialect.name} edge config ${controllers}×${instances}: ${loadSpread(loads)}; the aim: the 304's CPU ≤ 1.5× the key list's (key list/this ≥ 0.67x)`,
      )
      for (const label of ['key list', '304', '200']) printHttpFigure(figures, label, 'key list')
    } finally {
      await stopBenchServer(app)
    }
  }
}
