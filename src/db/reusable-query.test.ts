import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { CompiledQuery } from 'kysely'
import { databaseUrlFor, testDialects } from '../../test/harness.ts'
import { connectDatabase, directReader } from './connect.ts'
import { migrateToLatest } from './migrate.ts'
import { reusableQuery } from './reusable-query.ts'
import type { Db } from './schema.ts'
import { withSystemScope } from './tenant-scope.ts'

const orgBySlug = reusableQuery((db: Db, slug: string) => db.selectFrom('orgs').select(['id', 'slug', 'name']).where('slug', '=', slug))
const renameOrg = reusableQuery((db: Db, slug: string, name: string) => db.updateTable('orgs').set({ name }).where('slug', '=', slug))
const lockOrg = reusableQuery((db: Db, slug: string) => db.selectFrom('orgs').select('id').where('slug', '=', slug).forUpdate())

async function open(t: TestContext, dialect: 'sqlite' | 'postgres') {
  const handle = await connectDatabase(await databaseUrlFor(t, dialect), { poolSize: 2 })
  t.after(() => handle.close())
  await migrateToLatest(handle.db)
  return handle
}

const slug = () => `rq-${Math.random().toString(36).slice(2, 10)}`
const orgRow = (s: string) => ({ id: `org_${s}`, slug: s, name: 'Before', created_at: 1 })

for (const dialect of testDialects()) {
  describe(`${dialect}: reusable queries`, () => {
    it('answer what the same query built by Kysely answers; a write or a locking read is refused', async (t) => {
      const { db } = await open(t, dialect)
      const s = slug()
      await withSystemScope(async () => {
        await db.insertInto('orgs').values(orgRow(s)).execute()
        assert.deepEqual(await orgBySlug(db, s), await db.selectFrom('orgs').select(['id', 'slug', 'name']).where('slug', '=', s).execute())
        assert.deepEqual(await orgBySlug(db, `${s}-absent`), [])
        await assert.rejects(renameOrg(db, s, 'After'), /reads only/)
        await assert.rejects(lockOrg(db, s), /reads only/)
        assert.deepEqual(
          (await orgBySlug(db, s)).map((r) => r.name),
          ['Before'],
          'nothing written',
        )
      })
    })
  })
}

if (testDialects().includes('sqlite')) {
  describe('sqlite: reusable reads on the one connection', () => {
    it("run directly outside a transaction; never inside one, nor on a transaction's db", async (t) => {
      const { db } = await open(t, 'sqlite')
      const s = slug()
      await db.insertInto('orgs').values(orgRow(s)).execute()
      const read = directReader(db)!
      assert.equal((read('select slug from orgs where slug = ?', [s]) as unknown[]).length, 1)
      assert.equal(read('update orgs set name = ? where slug = ?', ['x', s]), undefined, 'a write is not a read')
      await db.transaction().execute(async (trx) => {
        assert.equal(directReader(trx), undefined)
        assert.equal(read('select slug from orgs where slug = ?', [s]), undefined, 'a transaction is open on the connection')
      })
    })

    it("builds the rows Kysely's driver builds, and leaves the driver's statements as they were", async (t) => {
      const { db } = await open(t, 'sqlite')
      const s = slug()
      await db.insertInto('orgs').values(orgRow(s)).execute()
      const read = directReader(db)!
      // A repeated name keeps its last value, as better-sqlite3's own row objects do; the columns keep their order.
      const source = 'select name as x, slug, id as x, created_at from orgs where slug = ?'
      const direct = read(source, [s])
      const driver = (await db.executeQuery(CompiledQuery.raw(source, [s]))).rows
      assert.deepEqual(direct, [{ x: `org_${s}`, slug: s, created_at: 1 }])
      assert.deepEqual(direct, driver)
      assert.deepEqual(Object.keys(direct![0] as object), Object.keys(driver[0] as object))
      assert.deepEqual(read(source, [`${s}-absent`]), [])
    })

    it('a read issued while another transaction is open waits for it: never its uncommitted rows', async (t) => {
      const { db } = await open(t, 'sqlite')
      const rolledBack = slug()
      const committed = slug()
      let during: Promise<unknown[]> | undefined
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await trx.insertInto('orgs').values(orgRow(rolledBack)).execute()
          during = orgBySlug(db, rolledBack)
          throw new Error('roll back')
        }),
        /roll back/,
      )
      assert.deepEqual(await during, [], 'the rolled-back row was never visible')
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('orgs').values(orgRow(committed)).execute()
        during = orgBySlug(db, committed)
      })
      assert.deepEqual((await during!).length, 1, 'the read ran after the commit')
    })
  })
}
