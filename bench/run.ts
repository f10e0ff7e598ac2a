// npm run bench: every hot path as a ratio against a baseline measured in the same run.
// BENCH_SECONDS (default 5) per measurement; BENCH_DIALECTS=sqlite,postgres (PostgreSQL is started here unless
// TEST_DATABASE_URL names one).
import { startPostgres, createTestDatabase } from '../test/postgres.ts'
import { benchApiKeys } from './api-keys.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const wanted = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',')
let stop: (() => Promise<void>) | undefined
const dialects: Array<{ name: string; url?: string }> = []
if (wanted.includes('sqlite')) dialects.push({ name: 'sqlite' })
if (wanted.includes('postgres')) {
  let admin = process.env.TEST_DATABASE_URL
  if (!admin) {
    const pg = await startPostgres()
    admin = pg.url
    stop = pg.stop
  }
  dialects.push({ name: 'postgres', url: await createTestDatabase(admin) })
}
console.log(`# sitegrid bench: ${seconds} s per measurement, 32 connections, loopback, node ${process.version}`)
try {
  await benchApiKeys(dialects, seconds)
} finally {
  await stop?.()
}
