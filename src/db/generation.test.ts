import assert from 'node:assert/strict'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { describe, it, type TestContext } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { databaseUrlFor } from '../../test/harness.ts'
import { connectDatabase } from './connect.ts'
import { migrateToLatest } from './migrate.ts'

async function open(t: TestContext) {
  const url = await databaseUrlFor(t, 'sqlite')
  const handle = await connectDatabase(url)
  t.after(() => handle.close())
  await migrateToLatest(handle.db)
  // Another process's connection on the same file: its commits move data_version for the handle.
  const other = new BetterSqlite3(url.slice('sqlite:'.length))
  t.after(() => other.close())
  const commit = (slug: string) => other.prepare('insert into orgs (id, slug, name, created_at) values (?, ?, ?, 1)').run(`org_${slug}`, slug, slug)
  return { handle, commit }
}

// The SQLite generation reads data_version once per turn of the event loop (issue 29, sixth pass); these hold what
// that memory must never do: outlive its turn, or hide this process's own commits.
describe('sqlite: the invalidation generation', () => {
  it("another connection's commit moves it by the next turn of the event loop; within the turn the first read stands", async (t) => {
    const { handle, commit } = await open(t)
    await nextTurn()
    const before = handle.generation()
    commit('gen-a')
    assert.equal(handle.generation(), before, 'read once per turn: the requests of this turn arrived before the commit')
    await nextTurn()
    assert.notEqual(handle.generation(), before, 'a commit by another connection moves the generation by the next turn')
    const after = handle.generation()
    await nextTurn()
    commit('gen-b')
    await nextTurn()
    assert.notEqual(handle.generation(), after, 'and again for the next commit: the memory is renewed every turn')
  })

  it('this process moves it at once, within the turn (invalidateLocally after its own revoke)', async (t) => {
    const { handle } = await open(t)
    const before = handle.generation()
    handle.invalidateLocally()
    assert.notEqual(handle.generation(), before)
  })
})
