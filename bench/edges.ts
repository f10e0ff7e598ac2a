// Issue 30: an edge gateway's configuration poll with an unchanged ETag (304) against the authenticated key-list GET,
// server CPU per request in the same run (the figure: ≤ 1.5× the key list). The site holds BENCH_EDGE_CONTROLLERS
// (20) controllers on the polled edge with BENCH_EDGE_INSTANCES (10) instances each, so that a full build would show.
import { ratio, requestsPerSecond, startBenchServer, stopBenchServer } from './lib.ts'

export async function benchEdges(dialects: Array<{ name: string; url?: string }>, seconds: number): Promise<void> {
  const controllers = Number(process.env.BENCH_EDGE_CONTROLLERS ?? 20)
  const instances = Number(process.env.BENCH_EDGE_INSTANCES ?? 10)
  for (const dialect of dialects) {
    const app = await startBenchServer('app.ts', dialect.url ? { BENCH_DATABASE_URL: dialect.url } : {})
    try {
      const origin = `http://127.0.0.1:${app.info.port}`
      const headers = { host: app.info.host!, 'x-api-key': app.info.key!, 'content-type': 'application/json' }
      const send = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${origin}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
        if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
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
        const { id } = (await (await send('POST', '/api/sites/BENCH/controllers', body)).json()) as { id: string }
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
      const config = `${origin}/api/sites/BENCH/edges/GW-1/config`
      const etag = (await send('GET', '/api/sites/BENCH/edges/GW-1/config')).headers.get('etag')!
      const { 'content-type': _json, ...get } = headers
      const list = await requestsPerSecond(`${origin}/api/admin/api-keys`, get, seconds, undefined, app)
      const unchanged = await requestsPerSecond(config, { ...get, 'if-none-match': etag }, seconds, undefined, app)
      const full = await requestsPerSecond(config, get, seconds, undefined, app)
      const perRequest = (run: { cpuMicrosPerRequest: number | undefined }) => `${run.cpuMicrosPerRequest!.toFixed(0)} µs/request`
      console.log(
        `${dialect.name.padEnd(8)} edge config ${controllers}×${instances}   key list ${perRequest(list)}   304 ${perRequest(unchanged)} (non-2xx ${unchanged.non2xx})   ` +
          `200 ${perRequest(full)}   304/key list ${ratio(unchanged.cpuMicrosPerRequest!, list.cpuMicrosPerRequest!)}   200/304 ${ratio(full.cpuMicrosPerRequest!, unchanged.cpuMicrosPerRequest!)}`,
      )
    } finally {
      await stopBenchServer(app)
    }
  }
}
