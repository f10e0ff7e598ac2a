// Issue 24, left open: SQLite stores any value in any column, so a crafted package's text in an integer column was
// stored there and refused by PostgreSQL. Every value is checked against its column's declared type before a row is
// written: the same 422 on both databases, naming the part, the row and the column, and the organisation unchanged.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { harness, testDialects } from '../../../test/harness.ts'
import { NO_RATE_LIMIT, seedTenant, snapshotDiff, snapshotOrg } from '../../../test/hardening/support.ts'
import { repack, unpack } from '../../../test/support/tenant-package.ts'

type Case = [
  name: string,
  part: 'controllers' | 'instances' | 'electrical_nodes',
  column: string,
  value: unknown,
  rule: 'type' | 'not null',
  expected: string | undefined,
]

const INT4 = 'an integer from -2147483648 to 2147483647'
const CASES: Case[] = [
  ['text in an integer column', 'controllers', 'port', 'forty-four', 'type', INT4],
  ['digits as text in an integer column', 'controllers', 'port', '44818', 'type', INT4],
  ['a number in a text column', 'controllers', 'ip_address', 1234, 'type', 'a string'],
  ['a float in an integer column', 'controllers', 'poll_interval_ms', 1.5, 'type', INT4],
  ['an object in a text column', 'controllers', 'name', { a: 1 }, 'type', 'a string'],
  ['an array in a text column', 'controllers', 'name', ['a'], 'type', 'a string'],
  ['a boolean in an integer column', 'controllers', 'platform', true, 'type', INT4],
  ['null in a NOT NULL column', 'controllers', 'ip_address', null, 'not null', undefined],
  ['an integer past the integer column', 'controllers', 'timeout_ms', 2 ** 40, 'type', INT4],
  [
    'an integer past 2^53 in a bigint column',
    'controllers',
    'created_at',
    2 ** 63,
    'type',
    `an integer from ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`,
  ],
  ['text that is not JSON in a JSON column', 'instances', 'config', '{not json', 'type', 'JSON text'],
  ["text that is not JSON in a node's study parameters", 'electrical_nodes', 'study', '{not json', 'type', 'JSON text'],
]

for (const dialect of testDialects()) {
  describe(`${dialect}: a tenant package's values are checked against their columns' types (issue 24)`, () => {
    it('a wrong-type, out-of-range or null value in a crafted row answers 422 PackageInvalid naming the part, row and column on both databases, and nothing is written', async (t) => {
      const h = await harness(t, dialect, NO_RATE_LIMIT)
      const tenant = await seedTenant(h, 'CV')
      const base = `/api/admin/orgs/${tenant.ids.slug}/tenant`
      const exported = await h.inject(tenant.owner, { method: 'GET', url: `${base}/export` })
      assert.equal(exported.statusCode, 200)
      const { header, parts } = unpack(exported.rawPayload)
      const count = async (table: string) =>
        Number(
          (await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where org_id = ${tenant.org.id}`.execute(h.handle.db)).rows[0]!.n,
        )
      const before = await snapshotOrg(h, tenant.org.id)
      const counts = { controllers: await count('controllers'), instances: await count('instances') }
      for (const [name, part, column, value, rule, expected] of CASES) {
        const changed = new Map([...parts].map(([k, rows]) => [k, structuredClone(rows)]))
        const rows = changed.get(part)!
        // A new record (its own key and asset number), so that a stored one would show in the count.
        const first = rows[0]!
        rows.push({ ...first, id: `${part}-crafted`, ...('asset_number' in first ? { asset_number: 'CV-crafted' } : {}), [column]: value })
        const staged = await h.inject(tenant.owner, {
          method: 'PUT',
          url: `${base}/import/package`,
          payload: await repack(header, changed),
          headers: { 'content-type': 'application/gzip' },
        })
        assert.equal(staged.statusCode, 200, `${name}: ${staged.body}`)
        const res = await h.inject(tenant.owner, { method: 'POST', url: `${base}/import?force=true` })
        const body = res.json()
        const reason = `row ${rows.length} of part ${part}: ${column} breaks a ${rule} rule of this server's table${expected ? ` (it holds ${expected})` : ''}`
        assert.deepEqual(
          [res.statusCode, body.code, body.reason, body.part, body.row, body.column, body.rule],
          [422, 'PackageInvalid', reason, part, rows.length, column, rule],
          `${name}: ${res.body}`,
        )
        assert.deepEqual({ controllers: await count('controllers'), instances: await count('instances') }, counts, `${name}: nothing written`)
      }
      // The last crafted package stays staged (a refused import leaves it there to be replaced); nothing else moved.
      assert.deepEqual(
        snapshotDiff(before, await snapshotOrg(h, tenant.org.id)).filter((d) => !d.startsWith('tenant_import_')),
        [],
      )
      const untouched = await repack(header, parts)
      assert.equal(
        (await h.inject(tenant.owner, { method: 'PUT', url: `${base}/import/package`, payload: untouched, headers: { 'content-type': 'application/gzip' } }))
          .statusCode,
        200,
      )
      assert.equal((await h.inject(tenant.owner, { method: 'POST', url: `${base}/import?force=true` })).statusCode, 200, 'the package as exported imports')
    })
  })
}
