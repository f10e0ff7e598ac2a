import { spawn, type ChildProcess } from 'node:child_process'
import { type IncomingHttpHeaders, request } from 'node:http'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
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
    // The first line only: a server logging at info writes a line a request afterwards, which is read and dropped.
    let buffer: string | undefined = ''
    child.stdout!.on('data', (d) => {
      if (buffer === undefined) return
      buffer += String(d)
      const end = buffer.indexOf('\n')
      if (end < 0) return
      const line = buffer.slice(0, end)
      buffer = undefined
      resolve({ child, info: JSON.parse(line) as Record<string, string> })
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

/**
 * Waits until the 1-minute load average is below `threshold` (checked every 10 s, at most `maxWaitMs`) and says so on
 * stdout; BENCH_NO_WAIT=1 skips the wait (smoke runs on a busy machine). Returns the load when the bench starts.
 */
export async function waitForQuietMachine(threshold = 1.5, maxWaitMs = 30 * 60_000): Promise<number> {
  const load = () => loadavg()[0]!
  if (process.env.BENCH_NO_WAIT === '1') {
    console.log(`# BENCH_NO_WAIT=1: not waiting for a quiet machine (1-min load ${load().toFixed(2)}); figures are not quiet-machine figures`)
    return load()
  }
  const started = Date.now()
  if (load() >= threshold) console.log(`# waiting for the 1-minute load (${load().toFixed(2)}) to fall below ${threshold}…`)
  while (load() >= threshold) {
    if (Date.now() - started > maxWaitMs) {
      console.log(`# the load stayed at or above ${threshold} for ${Math.round(maxWaitMs / 60_000)} min; starting anyway (load ${load().toFixed(2)})`)
      return load()
    }
    await new Promise((resolve) => setTimeout(resolve, 10_000))
  }
  console.log(`# 1-minute load ${load().toFixed(2)} < ${threshold}: starting`)
  return load()
}

/** The 1-minute load average now. */
export const loadNow = (): number => loadavg()[0]!

/** Median of some numbers (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** A percentile (0–100) of some numbers, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const s = [...values].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!
}

/** How many times each figure is measured (BENCH_RUNS, default 3): the median is printed with the spread. */
export const BENCH_RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3))

/**
 * Measures `once` BENCH_RUNS times (issue 29's discipline): each named figure's values across the runs, and the
 * 1-minute load at the start of each run. Print them with `medianWithSpread` (figures) and `loadSpread` (loads).
 */
export async function benchRuns<T extends Record<string, number>>(
  once: (run: number) => Promise<T>,
  runs = BENCH_RUNS,
): Promise<{ figures: { [K in keyof T]: number[] }; loads: number[] }> {
  const figures = {} as { [K in keyof T]: number[] }
  const loads: number[] = []
  for (let run = 0; run < runs; run++) {
    loads.push(loadNow())
    const measured = await once(run)
    for (const [key, value] of Object.entries(measured) as Array<[keyof T, number]>) (figures[key] ??= []).push(value)
  }
  return { figures, loads }
}

/** "load 0.8 (0.6–1.1)": the 1-minute load over the runs of a figure. */
export const loadSpread = (loads: readonly number[]): string =>
  `load ${median(loads).toFixed(2)} (${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)})`

/** "median (min–max over n runs)" of repeated measurements, each formatted by `fmt`. */
export function medianWithSpread(values: readonly number[], fmt: (n: number) => string): string {
  return `${fmt(median(values))} (${fmt(Math.min(...values))}–${fmt(Math.max(...values))} over ${values.length} runs)`
}

/** One run's HTTP figures by label: `${label} rps` (requests per second) and `${label} cpu` (server CPU µs per request). */
export type HttpFigures = Record<string, number>

/**
 * Measures `path` on a started bench server into `run` (see HttpFigures) and, unless `stop` is false, stops the server.
 * Refuses a run whose answers were not all of one kind (a 200 route that answered errors measures nothing).
 */
export async function measureHttp(
  run: HttpFigures,
  label: string,
  server: Started,
  path: string,
  headers: () => Record<string, string>,
  seconds: number,
  stop = true,
): Promise<void> {
  try {
    const result = await requestsPerSecond(`http://127.0.0.1:${server.info.port}${path}`, headers(), seconds, undefined, server)
    run[`${label} rps`] = result.rps
    run[`${label} cpu`] = result.cpuMicrosPerRequest!
  } finally {
    if (stop) await stopBenchServer(server)
  }
}

/** Per run, `baseline`'s CPU per request ÷ `label`'s (higher is better: the throughput ratio a server-bound machine sees). */
export const cpuRatios = (figures: Record<string, number[]>, label: string, baseline: string): number[] =>
  figures[`${label} cpu`]!.map((cpu, run) => figures[`${baseline} cpu`]![run]! / cpu)

/** One line: req/s, server CPU µs per request and `baseline`'s CPU ÷ this one, each as a median with its spread. */
export function printHttpFigure(figures: Record<string, number[]>, label: string, baseline: string): void {
  const rps = medianWithSpread(figures[`${label} rps`]!, (n) => n.toFixed(0))
  const cpu = medianWithSpread(figures[`${label} cpu`]!, (n) => n.toFixed(0))
  const vs = label === baseline ? '' : `  ${baseline}/this ${medianWithSpread(cpuRatios(figures, label, baseline), (n) => `${n.toFixed(2)}x`)}`
  console.log(`${label.padEnd(30)} ${rps} req/s  server CPU ${cpu} µs/request${vs}`)
}

/**
 * One request to a bench server by node:http (fetch refuses to set the Host header, which names the organisation):
 * the status, the headers and the body's text.
 */
export function httpRequest(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const req = request(url, { method, headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' } }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }))
    })
    req.on('error', reject)
    req.end(payload)
  })
}
