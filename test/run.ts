// The whole test suite: starts a real PostgreSQL (unless TEST_DATABASE_URL names one), then runs every
// *.test.ts under src/ and test/ with Node's test runner, whose closing summary is the result.
import { spawn } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { dropTestDatabases, startPostgres } from './postgres.ts'

function findTests(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (name === 'node_modules' || name.startsWith('.')) return []
    if (statSync(path).isDirectory()) return findTests(path)
    return name.endsWith('.test.ts') ? [path] : []
  })
}

const files = process.argv.length > 2 ? process.argv.slice(2) : ['src', 'test'].flatMap(findTests).sort()
const wantsPostgres = (process.env.SITEGRID_TEST_DIALECTS ?? 'sqlite,postgres').includes('postgres')
let url = process.env.TEST_DATABASE_URL
let stop: (() => Promise<void>) | undefined
if (wantsPostgres && !url) {
  const server = await startPostgres()
  url = server.url
  stop = server.stop
  console.log(`# PostgreSQL for tests on ${url.replace(/:[^:@/]*@/, ':***@')}`)
}

const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=900000', ...files], {
  stdio: 'inherit',
  env: { ...process.env, ...(url ? { TEST_DATABASE_URL: url } : {}) },
})
const code = await new Promise<number>((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))))
if (url && !stop) await dropTestDatabases(url).catch((err: unknown) => console.error('could not drop test databases:', err))
await stop?.()
process.exit(code)
