import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { sleep } from '../harness.ts'
import { freePort } from '../postgres.ts'

const ROOT = join(import.meta.dirname, '..', '..')
export const BIN = join(ROOT, 'bin', 'sitegrid')

/** The newest modification time of the sources the build reads (as bin/sitegrid's staleness check sees them). */
function newestSource(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(path).mtimeMs)
  }
  return newest
}

/**
 * bin/sitegrid runs the build in dist/ and refuses a missing or stale one: a test file that runs it builds first
 * when a source is newer (`npm test` builds before the run; this covers a single file run after an edit). Two test
 * files building at once write the same files, each renamed into place whole (src/cli/build.ts).
 */
export function ensureBuilt(): void {
  let built = 0
  try {
    built = statSync(join(ROOT, 'dist', 'sitegrid.mjs')).mtimeMs
  } catch {
    // no build yet: made below
  }
  if (built > Math.max(newestSource(join(ROOT, 'src')), newestSource(join(ROOT, 'web', 'src')))) return
  for (const script of [join(ROOT, 'web', 'build.ts'), join(ROOT, 'src', 'cli', 'build.ts')]) {
    const result = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 })
    if (result.status !== 0) throw new Error(`building ${script} failed: ${result.stderr}`)
  }
}
ensureBuilt()

export function runCli(args: string[], options: { cwd: string; env?: Record<string, string> }) {
  const result = spawnSync(BIN, args, { cwd: options.cwd, env: { PATH: process.env.PATH, ...options.env }, encoding: 'utf8', timeout: 60_000 })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

export interface Server {
  url: string
  port: number
  child: ChildProcess
  output: () => string
  stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

/**
 * Starts `sitegrid serve` as a real process and waits until /healthz answers. `bundle`: run that pre-bundled
 * `sitegrid` (test/support/server-bundle.ts) with node instead of bin/sitegrid, for tests that restart many servers,
 * with the malloc setting and the V8 flag bin/sitegrid gives node (so memory figures are the product's).
 */
export async function startServer(options: { cwd: string; env: Record<string, string>; port?: number; bundle?: string }): Promise<Server> {
  // A free port can be taken between freePort() and the server's listen (tests start servers concurrently): such a
  // start is tried again on another port. The server counts as started once it says it listens on its port (its ready
  // line), so that another process answering /healthz there is never taken for it.
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort())
    try {
      return await startServerOn(port, options)
    } catch (err) {
      if (options.port !== undefined || attempt >= 5 || !(err instanceof PortTaken)) throw err
    }
  }
}

class PortTaken extends Error {}

async function startServerOn(port: number, options: { cwd: string; env: Record<string, string>; bundle?: string }): Promise<Server> {
  const [command, args] = options.bundle ? [process.execPath, ['--heap-growing-percent=50', options.bundle, 'serve']] : [BIN, ['serve']]
  const env = { PATH: process.env.PATH, ...(options.bundle ? { MALLOC_ARENA_MAX: '2' } : {}), ...options.env, PORT: String(port), HOST: '127.0.0.1' }
  const child = spawn(command, args, { cwd: options.cwd, env })
  let output = ''
  child.stdout?.on('data', (d) => {
    output += String(d)
  })
  child.stderr?.on('data', (d) => {
    output += String(d)
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const url = `http://127.0.0.1:${port}`
  const ready = () => output.includes(' ready: ') && output.includes(`:${port}/`)
  let healthy = false
  for (let i = 0; i < 1200 && !healthy; i++) {
    if (child.exitCode !== null) {
      if (output.includes('EADDRINUSE')) throw new PortTaken(`port ${port} taken: ${output}`)
      throw new Error(`server exited early: ${output}`)
    }
    try {
      healthy = ready() && (await fetch(`${url}/healthz`)).ok
    } catch {
      healthy = false
    }
    if (!healthy) await sleep(100)
  }
  if (!healthy) {
    child.kill('SIGKILL')
    throw new Error(`server not healthy after 120 s: ${output}`)
  }
  return {
    url,
    port,
    child,
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal)
      return exited
    },
  }
}

/** An HTTP call that may set the Host header (fetch cannot), for tenant hosts on loopback. */
export function httpRequest(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string; json: () => unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => {
        body += d
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, json: () => JSON.parse(body) }))
    })
    req.on('error', reject)
    req.end(init.body)
  })
}

/** Like runCli, without blocking this process's event loop (for servers the test itself runs, e.g. SMTP). */
export function runCliAsync(
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(BIN, args, { cwd: options.cwd, env: { PATH: process.env.PATH, ...options.env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => {
      stdout += String(d)
    })
    child.stderr.on('data', (d) => {
      stderr += String(d)
    })
    child.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}
