import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import autocannon from 'autocannon'

export interface Started { child: ChildProcess; info: Record<string, string> }

/** Starts a bench server script in its own process; it prints one JSON line ({ port, … }) when ready. */
export function startBenchServer(script: string, env: Record<string, string> = {}): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'servers', script)], {
    env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'],
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

export async function stopBenchServer(s: Started): Promise<void> {
  s.child.removeAllListeners('exit')
  s.child.kill('SIGTERM')
  await new Promise((resolve) => s.child.once('exit', resolve))
}

/** Requests per second over `seconds`, after a short warm-up, on loopback. */
export async function requestsPerSecond(url: string, headers: Record<string, string>, seconds = 5, connections = 32): Promise<{ rps: number; p50: number; p99: number; non2xx: number }> {
  await autocannon({ url, headers, connections, duration: 1 })
  const result = await autocannon({ url, headers, connections, duration: seconds })
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx }
}

export function ratio(candidate: number, baseline: number): string {
  return `${(candidate / baseline).toFixed(2)}x`
}
