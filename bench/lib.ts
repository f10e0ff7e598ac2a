import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'

export interface Started {
  child: ChildProcess
  info: Record<string, string>
}

/** Starts a bench server script in its own process; it prints one JSON line ({ port, … }) when ready. */
export function startBenchServer(script: string, env: Record<string, string> = {}): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'servers', script)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolve, reject) => {
    let buffer = ''
    child.stdout!.on('data', (d) => {
      buffer += String(d)
      const line = buffer.split('\n')[0]
      if (buffer.includes('\n') && line) resolve({ child, info: JSON.parse(line) as Record<string, string> })
    })
    child.on('exit', (code) => reject(new Error(`${script} exited with ${code}`)))
  })
}

/**
 * A SQLite file in a folder of the bench's own, for a bench that opens the database after its server stopped (the
 * server's own scratch folder, without BENCH_DATABASE_URL, is removed when it stops).
 */
export function scratchSqlite(): { url: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-bench-'))
  return { url: `sqlite:${join(dir, 'bench.db')}`, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

export async function stopBenchServer(s: Started): Promise<void> {
  s.child.removeAllListeners('exit')
  s.child.kill('SIGTERM')
  await new Promise((resolve) => s.child.once('exit', resolve))
}

/**
 * Requests per second over `seconds`, after a short warm-up, on loopback. With `server` (a bench server process), also
 * the CPU time that process spent per request (user + system, from /proc): on a loaded or small machine the load
 * generator competes for the cores, and CPU per request is the figure that load disturbs least.
 */
export async function requestsPerSecond(
  url: string,
  headers: Record<string, string>,
  seconds = 5,
  connections = 32,
  server?: Started,
): Promise<{ rps: number; p50: number; p99: number; non2xx: number; cpuMicrosPerRequest: number | undefined }> {
  await autocannon({ url, headers, connections, duration: 1 })
  const cpuBefore = server && processCpuMicros(server)
  const result = await autocannon({ url, headers, connections, duration: seconds })
  const cpuMicrosPerRequest = server && cpuBefore !== undefined ? (processCpuMicros(server) - cpuBefore) / (result.requests.total ?? 0) : undefined
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, cpuMicrosPerRequest }
}

/** User + system CPU time of a bench server process so far, in µs (Linux /proc; fields 14 and 15, clock ticks of 10 ms). */
function processCpuMicros(server: Started): number {
  const fields = readFileSync(`/proc/${server.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

export function ratio(candidate: number, baseline: number): string {
  return `${(candidate / baseline).toFixed(2)}x`
}
