// connect.ts `directWriter` (issue 29, session 22): on SQLite a few write statements run as one transaction at once on
// the connection, or not at all while a transaction is open there (the caller then goes through Kysely).
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { CompiledQuery } from 'kysely'
import { databaseUrlFor, testDialects } from '../../test/harness.ts'
import { systemClock } from '../clock.ts'
import { CLI_ACTOR } from '../identity.ts'
import type { OrgId } from '../ids.ts'
import { insertAudited } from '../modules/audit/service.ts'
import { connectDatabase, directWriter } from './connect.ts'
import { isUniqueViolation } from './constraint-errors.ts'
import { migrateToLatest } from './migrate.ts'
import type { Db } from './schema.ts'
import { withSystemScope } from './tenant-scope.ts'

async function open(t: TestContext, dialect: 'sqlite' | 'postgres') {
  const handle = await connectDatabase(await databaseUrlFor(t, dialect), { poolSize: 2 })
  t.after(() => handle.close())
  await migrateToLatest(handle.db)
  return handle
}

const insertOrg = (slug: string) => CompiledQuery.raw('insert into orgs (id, slug, name, created_at) values (?, ?, ?, ?)', [`org_${slug}`, slug, slug, 1])
const slugs = (handle: { db: Db }) =>
  withSystemScope(async () => (await handle.db.selectFrom('orgs').select('slug').orderBy('slug').execute()).map((r) => r.slug))

if (testDialects().includes('sqlite')) {
  describe('sqlite: direct writes on the one connection', () => {
    it('run every statement or none: a refused one rolls the others back and throws as the driver would', async (t) => {
      const handle = await open(t, 'sqlite')
      const write = directWriter(handle.db)!
      assert.equal(write([insertOrg('dw-a'), insertOrg('dw-b')]), true)
      assert.deepEqual(await slugs(handle), ['dw-a', 'dw-b'])
      // The second statement repeats a slug: the first (dw-c) goes with it.
      const err = (() => {
        try {
          write([insertOrg('dw-c'), insertOrg('dw-a')])
        } catch (e) {
          return e
        }
      })()
      assert.ok(isUniqueViolation(err), `a unique violation, as Kysely's would be: ${String(err)}`)
      assert.deepEqual(await slugs(handle), ['dw-a', 'dw-b'])
      assert.equal(write([insertOrg('dw-c')]), true, 'the connection is usable again, out of any transaction')
      assert.deepEqual(await slugs(handle), ['dw-a', 'dw-b', 'dw-c'])
    })

    it("do nothing while a transaction is open on the connection, nor on a transaction's db", async (t) => {
      const handle = await open(t, 'sqlite')
      const write = directWriter(handle.db)!
      await assert.rejects(
        handle.db.transaction().execute(async (trx) => {
          await trx.executeQuery(insertOrg('dw-held'))
          assert.equal(directWriter(trx), undefined)
          assert.equal(write([insertOrg('dw-during')]), false)
          throw new Error('roll back')
        }),
        /roll back/,
      )
      assert.deepEqual(await slugs(handle), [], 'neither the rolled-back row nor the refused write')
    })

    it('an audited insert issued while a transaction is open waits for it and then writes both rows', async (t) => {
      const handle = await open(t, 'sqlite')
      await withSystemScope(() => handle.db.insertInto('orgs').values({ id: 'org_dw', slug: 'dw', name: 'dw', created_at: 1 }).execute())
      const orgId = 'org_dw' as OrgId
      let audited: Promise<void> | undefined
      await handle.db.transaction().execute(async (trx) => {
        await trx.executeQuery(insertOrg('dw-first'))
        audited = insertAudited(
          handle,
          systemClock,
          orgId,
          CLI_ACTOR,
          { action: 'org.tested', target: 'dw-second' },
          { table: 'orgs', row: { id: 'org_dw-second', slug: 'dw-second', name: 'x', created_at: 2 } },
        )
        // It has not run inside this transaction (it would have been part of it, or failed on a nested BEGIN).
        await new Promise((resolve) => setTimeout(resolve, 20))
        assert.deepEqual((await trx.selectFrom('orgs').select('slug').where('slug', '=', 'dw-second').execute()).length, 0)
      })
      await audited
      assert.deepEqual(await slugs(handle), ['dw', 'dw-first', 'dw-second'])
      const trail = await handle.db.selectFrom('audit_events').select(['action', 'target']).where('org_id', '=', orgId).execute()
      assert.deepEqual(trail, [{ action: 'org.tested', target: 'dw-second' }])
    })
  })
}

if (testDialects().includes('postgres')) {
  describe('postgres: no direct writer', () => {
    it('leaves every write to Kysely (a pool has no one connection to run it on)', async (t) => {
      const handle = await open(t, 'postgres')
      assert.equal(directWriter(handle.db), undefined)
    })
  })
}
