import assert from 'node:assert/strict'
import { it } from 'node:test'
import { postgresUrl, testDialects } from '../../test/harness.ts'
import { connectDatabase } from './connect.ts'
import { currentScope, runInRequestScope, withOrgScope, withSystemScope } from './tenant-scope.ts'

// One process, in order: the scope functions call through until a PostgreSQL database is connected (an
// AsyncLocalStorage that has run keeps promise hooks on for the whole process), and carry scopes from then on.
it('scopes are carried only once a PostgreSQL database is connected in the process', async (t) => {
  const sqlite = await connectDatabase('sqlite::memory:')
  t.after(() => sqlite.close())
  assert.equal(
    withSystemScope(() => currentScope()),
    '',
    'SQLite alone: nothing reads the scope, none is carried',
  )
  assert.equal(
    withOrgScope('org_A', () => currentScope()),
    '',
  )
  assert.equal(
    runInRequestScope(() => currentScope()),
    '',
  )
  assert.throws(() => withOrgScope('*', () => 0), /organisation id/, 'the argument is checked all the same')
  if (!testDialects().includes('postgres')) return
  const pg = await connectDatabase(await postgresUrl(), { poolSize: 1 })
  t.after(() => pg.close())
  assert.equal(
    withSystemScope(() => currentScope()),
    '*',
  )
  assert.equal(
    await withOrgScope('org_A', async () => {
      await Promise.resolve()
      return currentScope()
    }),
    'org_A',
  )
  assert.equal(
    runInRequestScope(() => currentScope()),
    '',
  )
})
