import assert from 'node:assert/strict'
import { statSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { databaseUrlFor, testDialects } from '../../test/harness.ts'
import type { CheckpointOptions } from './checkpointer.ts'
import { connectDatabase } from './connect.ts'

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
  })
}
