import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { request } from 'node:http'
import { join } from 'node:path'
import { sleep } from '../harness.ts'
import { freePort } from '../postgres.ts'

export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'sitegrid')

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
 * `sitegrid` (test/support/server-bundle.ts) with node instead of bin/sitegrid, for tests that restart many servers.
 */
export async function startServer(options: { cwd: string; env: Record<string, string>; port?: number; bundle?: string }): Promise<Server> {
  const port = options.port ?? (await freePort())
  const [command, args] = options.bundle ? [process.execPath, [options.bundle, 'serve']] : [BIN, ['serve']]
  const child = spawn(command, args, { cwd: options.cwd, env: { PATH: process.env.PATH, ...options.env, PORT: String(port), HOST: '127.0.0.1' } })
  let output = ''
  child.stdout?.on('data', (d) => {
    output += String(d)
  })
  child.stderr?.on('data', (d) => {
    output += String(d)
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const url = `http://127.0.0.1:${port}`
  let healthy = false
  for (let i = 0; i < 1200 && !healthy; i++) {
    if (child.exitCode !== null) throw new Error(`server exited early: ${output}`)
    try {
      healthy = (await fetch(`${url}/healthz`)).ok
    } catch {
      await sleep(100)
    }
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
