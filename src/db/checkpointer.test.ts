import assert from 'node:assert/strict'
import { mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, it, type TestContext } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { databaseUrlFor, KEY_SECRET, testClock, testDialects } from '../../test/harness.ts'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config/load.ts'
import { createLogger } from '../http/logger.ts'
import { startCheckpointer, type CheckpointOptions } from './checkpointer.ts'
import { connectDatabase } from './connect.ts'
import { migrateToLatest } from './migrate.ts'

async function open(t: TestContext, checkpoints: CheckpointOptions) {
  const url = await databaseUrlFor(t, 'sqlite')
  const handle = await connectDatabase(url, { checkpoints })
  t.after(() => handle.close())
  await sql`create table blobs (b blob not null)`.execute(handle.db)
  const pageSize = (await sql<{ page_size: number }>`pragma page_size`.execute(handle.db)).rows[0]!.page_size
  const path = url.slice('sqlite:'.length)
  const size = (file: string) => statSync(file, { throwIfNoEntry: false })?.size ?? 0
  return { db: handle.db, pageSize, databaseBytes: () => size(path), walBytes: () => size(`${path}-wal`) }
}

/** A logger that keeps what it hears, as the server's logger would write it. */
function recordingLog() {
  const lines: Array<Record<string, unknown>> = []
  return {
    lines,
    error: (details: object, msg: string) => lines.push({ level: 'error', ...details, msg }),
    info: (details: object, msg: string) => lines.push({ level: 'info', ...details, msg }),
  }
}

/** Waits until `lines` holds `count` entries, then as long again as that took (at least `settleMs`): none may follow. */
async function settled(lines: unknown[], count: number, settleMs = 500) {
  const started = Date.now()
  while (lines.length < count && Date.now() - started < 20_000) await sleep(10)
  await sleep(Math.max(settleMs, Date.now() - started))
}

const writeBlob = (db: Awaited<ReturnType<typeof open>>['db'], bytes: number) => sql`insert into blobs (b) values (randomblob(${bytes}))`.execute(db)

if (testDialects().includes('sqlite')) {
  describe('sqlite: WAL checkpoints off the request path', () => {
    it('copy committed pages into the database file with no checkpoint by the serving connection', async (t) => {
      // A backstop far above what is written: only the worker can have copied the pages.
      const { db, databaseBytes } = await open(t, { intervalMs: 20, backstopPages: 100_000 })
      const before = databaseBytes()
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < 4; i++) await writeBlob(trx, 512 * 1024)
      })
      const deadline = Date.now() + 10_000
      while (databaseBytes() - before < 2 * 2 ** 20 && Date.now() < deadline) await sleep(20)
      assert.ok(databaseBytes() - before >= 2 * 2 ** 20, `the database file grew by ${databaseBytes() - before} bytes, not the 2 MiB committed`)
    })

    it('keep the WAL under the backstop when the worker falls behind', async (t) => {
      // The worker's first checkpoint comes after the test: only the backstop can bound the WAL.
      const backstopPages = 256
      const { db, pageSize, walBytes } = await open(t, { intervalMs: 600_000, backstopPages })
      // 200 transactions of 16 pages each: 12.5 times the backstop, back to back.
      let largest = 0
      for (let i = 0; i < 200; i++) {
        await writeBlob(db, 16 * pageSize)
        largest = Math.max(largest, walBytes())
      }
      // A WAL frame is a page and a 24-byte header; the bound allows the backstop plus the transaction that crossed it.
      const bound = (backstopPages + 2 * 16) * (pageSize + 24) + 32
      assert.ok(largest <= bound, `the WAL reached ${largest} bytes, above ${bound}`)
    })

    it('log each distinct failure of the worker once, however often it recurs, and the first success after it', async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'sitegrid-checkpoints-'))
      t.after(() => rmSync(dir, { recursive: true, force: true }))
      const path = join(dir, 'site.db')
      writeFileSync(path, Buffer.alloc(8192, 'x'))
      const log = recordingLog()
      const checkpointer = startCheckpointer(path, { intervalMs: 10, log })
      t.after(() => checkpointer.stop())
      // Every 10 ms for at least half a second the worker fails the same way: one line.
      await settled(log.lines, 1)
      assert.deepEqual(
        log.lines.map((l) => [l.level, l.event, l.code, l.path]),
        [['error', 'sqlite.checkpoint_failed', 'SQLITE_NOTADB', path]],
      )
      // The file removed: another failure, one line more (and no empty database made in its place).
      rmSync(path)
      await settled(log.lines, 2)
      assert.deepEqual(
        log.lines.slice(1).map((l) => [l.level, l.code]),
        [['error', 'SQLITE_CANTOPEN']],
      )
      assert.equal(statSync(path, { throwIfNoEntry: false }), undefined, 'the worker made a database where the file was removed')
      // A database back in its place: the worker opens it, checkpoints, and says so once.
      const db = new BetterSqlite3(path)
      db.pragma('journal_mode = WAL')
      db.close()
      await settled(log.lines, 3)
      assert.deepEqual(
        log.lines.slice(2).map((l) => [l.level, l.event]),
        [['info', 'sqlite.checkpoint_resumed']],
      )
    })

    it("the server keeps answering while its worker's checkpoints fail, and logs the failure once", async (t) => {
      const url = await databaseUrlFor(t, 'sqlite')
      const path = url.slice('sqlite:'.length)
      let output = ''
      const log = createLogger(
        'info',
        new Writable({
          write(chunk, _encoding, done) {
            output += String(chunk)
            done()
          },
        }),
      )
      const migrating = await connectDatabase(url)
      await migrateToLatest(migrating.db)
      await sql`create table blobs (b blob not null)`.execute(migrating.db)
      await migrating.close()
      // The worker's first checkpoint (and so its connection) comes after 50 ms; by then the file has gone from its
      // path, which the serving connection, open already, does not notice: only the worker's connection fails.
      const handle = await connectDatabase(url, { checkpoints: { intervalMs: 50, log } })
      renameSync(path, `${path}.moved`)
      t.after(() => handle.close())
      const config = loadConfig({ DATABASE_URL: url, SITEGRID_KEY_SECRET: KEY_SECRET, SITEGRID_BASE_DOMAIN: 'localhost' }, { requireKeySecret: true })
      const app = await buildApp({ config, handle, clock: testClock(), log })
      t.after(() => app.close())
      const lines = () =>
        output
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .filter((l) => String(l.event).startsWith('sqlite.checkpoint'))
      const started = Date.now()
      while (lines().length === 0 && Date.now() - started < 20_000) await sleep(20)
      // Twenty intervals and more of failing checkpoints: the server answers, reads and writes, throughout.
      for (let i = 0; i < 10; i++) {
        const ready = await app.inject({ method: 'GET', url: '/readyz' })
        assert.equal(ready.statusCode, 200, ready.body)
        await writeBlob(handle.db, 1024)
        await sleep(100)
      }
      assert.deepEqual(
        lines().map((l) => [l.level, l.event, l.code, l.path]),
        [[50, 'sqlite.checkpoint_failed', 'SQLITE_CANTOPEN', path]],
      )
    })
  })
}
