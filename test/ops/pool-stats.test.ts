import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts'
import { databaseUrlFor, sleep, testDialects } from '../harness.ts'

/** Holds the handle's connection in a transaction until `release` is called; resolves `held` once it holds it. */
function holdConnection(handle: DatabaseHandle) {
  let release!: () => void
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let isHeld!: () => void
  const held = new Promise<void>((resolve) => {
    isHeld = resolve
  })
  const done = handle.db.transaction().execute(async (trx) => {
    await sql`select 1`.execute(trx)
    isHeld()
    await released
  })
  return { held, release, done }
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await sleep(10)
}

for (const dialect of testDialects()) {
  describe(`${dialect}: the pool's figures (DatabaseHandle.poolStats, the metrics' source)`, () => {
    it('a caller that finds every connection held waits, and is counted; the timeouts are counted by kind', async (t) => {
      const url = await databaseUrlFor(t, dialect)
      const handle = await connectDatabase(url, { poolSize: 1, statementTimeoutMs: 100, connectTimeoutMs: 10_000 })
      t.after(() => handle.close())
      const before = handle.poolStats()
      assert.equal(before.size, 1)
      assert.equal(before.waiting, 0)

      const hold = holdConnection(handle)
      await hold.held
      assert.equal(handle.poolStats().idle, 0, 'the held connection is not idle')
      const second = sql`select 2 as n`.execute(handle.db)
      await until(() => handle.poolStats().waiting === 1)
      assert.equal(handle.poolStats().waiting, 1, 'the second caller waits')
      hold.release()
      await hold.done
      await second
      const after = handle.poolStats()
      assert.equal(after.waiting, 0)
      assert.equal(after.idle, 1)
      assert.equal(after.waited - before.waited, 1, 'one acquisition found no free connection')
      assert.equal(after.acquired - before.acquired, 2)

      if (dialect === 'postgres') {
        // statement_timeout (100 ms here): the server cancels the statement, SQLSTATE 57014.
        await assert.rejects(sql`select pg_sleep(5)`.execute(handle.db), { code: '57014' })
        assert.deepEqual(handle.poolStats().timeouts, { statement: 1, query: 0, connect: 0, busy: 0 })
        // No pool connection within the connect timeout.
        const short = await connectDatabase(url, { poolSize: 1, connectTimeoutMs: 100 })
        t.after(() => short.close())
        const blocker = holdConnection(short)
        await blocker.held
        await assert.rejects(sql`select 1`.execute(short.db), /timeout exceeded when trying to connect/)
        blocker.release()
        await blocker.done
        assert.deepEqual(short.poolStats().timeouts, { statement: 0, query: 0, connect: 1, busy: 0 })
      } else {
        // Another process's write transaction holds the file's write lock past busy_timeout (5 s): SQLITE_BUSY.
        const other = new BetterSqlite3(url.slice('sqlite:'.length))
        t.after(() => other.close())
        other.exec('begin immediate')
        await assert.rejects(
          handle.db.transaction().execute(async (trx) => sql`select 1`.execute(trx)),
          { code: 'SQLITE_BUSY' },
        )
        other.exec('rollback')
        assert.deepEqual(handle.poolStats().timeouts, { statement: 0, query: 0, connect: 0, busy: 1 })
      }
    })
  })
}
