import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../../test/harness.ts'
import { listTablesWithOrgId } from './introspect.ts'
import { EXCLUDED_TABLES, EXPORTED_TABLES } from './tables.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: what a tenant package holds`, () => {
    it('every table with an org_id is either exported or excluded with a reason', async (t) => {
      const h = await harness(t, dialect)
      const tables = await listTablesWithOrgId(h.handle.db, dialect)
      assert.ok(tables.includes('api_keys') && tables.includes('sites'))
      const decided = new Set([...EXPORTED_TABLES.map((e) => e.name), ...Object.keys(EXCLUDED_TABLES)])
      assert.deepEqual(
        tables.filter((name) => !decided.has(name)),
        [],
      )
    })
  })
}
