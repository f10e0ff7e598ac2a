// The whole test suite: starts a real PostgreSQL (unless TEST_DATABASE_URL names one), then runs every
// *.test.ts under src/, test/ and web/ with Node's test runner, whose closing summary is the result.
import { spawn } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { FailureDigest } from './failure-digest.ts'
import { dropTestDatabases, startPostgres } from './postgres.ts'

function findTests(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (name === 'node_modules' || name.startsWith('.')) return []
    if (statSync(path).isDirectory()) return findTests(path)
    return name.endsWith('.test.ts') ? [path] : []
  })
}

const files = process.argv.length > 2 ? process.argv.slice(2) : ['src', 'test', 'web'].flatMap(findTests).sort()
const wantsPostgres = (process.env.SITEGRID_TEST_DIALECTS ?? 'sqlite,postgres').includes('postgres')
let url = process.env.TEST_DATABASE_URL
let stop: (() => Promise<void>) | undefined
if (wantsPostgres && !url) {
  const server = await startPostgres()
  url = server.url
  stop = server.stop
  console.log(`# PostgreSQL for tests on ${url.replace(/:[^:@/]*@/, ':***@')}`)
}

// This run's databases carry its id (test/postgres.ts), so the clean-up below leaves other runs' databases alone.
const run = Math.random().toString(36).slice(2, 8)
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=900000', ...files], {
  stdio: ['inherit', 'pipe', 'inherit'],
  env: { ...process.env, SITEGRID_TEST_RUN: run, ...(url ? { TEST_DATABASE_URL: url } : {}) },
})
// The report passes through line by line; the failures are repeated just above the closing summary, so a reader of
// the run's last lines (a CI log's tail) sees which tests failed and why without the whole report.
const digest = new FailureDigest()
// A reader that went away (`npm test | head`) must not end the runner before the child and the clean-up below.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err
})
const lines = createInterface({ input: child.stdout })
lines.on('line', (line) => {
  for (const out of digest.push(line)) process.stdout.write(`${out}\n`)
})
const [code] = await Promise.all([
  new Promise<number>((resolve) => child.on('close', (c, signal) => resolve(c ?? (signal ? 1 : 0)))),
  new Promise((resolve) => lines.on('close', resolve)),
])
for (const out of digest.end()) process.stdout.write(`${out}\n`)
if (url && !stop) await dropTestDatabases(url, run).catch((err: unknown) => console.error('could not drop test databases:', err))
await stop?.()
process.exit(code)
