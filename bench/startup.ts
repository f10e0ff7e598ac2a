// Start-up of whole processes against `node -e 0` in the same run (issue 27): `sitegrid --help`, `sitegrid org list`
// on an initialised data folder, and `npm start` to the first 200 on /healthz. Each is run BENCH_RUNS times
// (default 3) as the build runs it (bin/sitegrid → dist/) and, for the before, from the sources through tsx
// (SITEGRID_FROM_SOURCE=1: what bin/sitegrid ran before the build existed), or with BENCH_STARTUP_BEFORE=PATH another
// checkout's bin/sitegrid (e.g. main's; its start is timed as `init && serve`, without npm and its console build).
// Aims: --help and org list ≤ 0.5 s and ≤ 5× node -e 0; npm start ≤ 3 s. bench/run.ts waits for a quiet machine first.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../test/postgres.ts'
import { BENCH_RUNS, median, medianWithSpread } from './lib.ts'

const ROOT = join(import.meta.dirname, '..')
const BIN = join(ROOT, 'bin', 'sitegrid')

function timed(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): number {
  const started = process.hrtime.bigint()
  const result = spawnSync(command, args, { ...options, encoding: 'utf8' })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr}`)
  return ms
}

function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
      res.resume()
      resolve(res.statusCode === 200)
    })
    req.on('error', () => resolve(false))
    req.end()
  })
}

/** A start command (in its own process group) until the first 200 on /healthz, then SIGTERM to the group. */
async function timedStart(command: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const port = await freePort()
  const started = process.hrtime.bigint()
  const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, detached: true, stdio: 'ignore' })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}`)
      if (await healthy(port)) return Number(process.hrtime.bigint() - started) / 1e6
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  } finally {
    process.kill(-child.pid!, 'SIGTERM')
    await exited
  }
}

export async function benchStartup(runs = BENCH_RUNS): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-bench-startup-'))
  // An initialised data folder with one organisation; every path absolute, so npm start (run in the project's folder) uses it.
  const env = { PATH: process.env.PATH, SITEGRID_DATA_DIR: join(dir, 'data'), DATABASE_URL: `sqlite:${join(dir, 'data', 'sitegrid.db')}` }
  const beforeBin = process.env.BENCH_STARTUP_BEFORE
  const before = beforeBin ?? BIN
  const beforeEnv = beforeBin ? env : { ...env, SITEGRID_FROM_SOURCE: '1' }
  const beforeStart = beforeBin ? ['sh', '-c', `"${beforeBin}" init && exec "${beforeBin}" serve`] : ['npm', 'start', '--silent']
  try {
    timed(BIN, ['init'], { cwd: dir, env })
    timed(BIN, ['org', 'create', 'plant'], { cwd: dir, env })
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
    const measure = async (fn: () => number | Promise<number>) => {
      const values: number[] = []
      for (let i = 0; i < runs; i++) values.push(await fn())
      return values
    }
    const node = await measure(() => timed(process.execPath, ['-e', '0'], { cwd: dir, env }))
    console.log(`# startup: whole processes, median of ${runs}; node -e 0 ${medianWithSpread(node, s)}; before = ${beforeBin ?? 'the sources through tsx'}`)
    const rows: Array<[string, () => number | Promise<number>, () => number | Promise<number>, number]> = [
      ['sitegrid --help', () => timed(BIN, ['--help'], { cwd: dir, env }), () => timed(before, ['--help'], { cwd: dir, env: beforeEnv }), 500],
      ['sitegrid org list', () => timed(BIN, ['org', 'list'], { cwd: dir, env }), () => timed(before, ['org', 'list'], { cwd: dir, env: beforeEnv }), 500],
      ['npm start → first 200 /healthz', () => timedStart(['npm', 'start', '--silent'], env), () => timedStart(beforeStart, beforeEnv), 3000],
    ]
    for (const [name, built, source, aimMs] of rows) {
      const after = await measure(built)
      const previous = await measure(source)
      const m = median(after)
      const ratio = m / median(node)
      const verdict = m <= aimMs && (aimMs > 500 || ratio <= 5) ? 'meets' : 'MISSES'
      console.log(
        `${name.padEnd(32)} built ${medianWithSpread(after, s)} = ${ratio.toFixed(1)}× node -e 0; before ${medianWithSpread(previous, s)}; aim ≤ ${s(aimMs)}${aimMs === 500 ? ' and ≤ 5×' : ''}: ${verdict}`,
      )
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
