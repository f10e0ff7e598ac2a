// Session 23, hostile uploads: a tenant package whose times leave what an answer writes. Every stored time is read
// back as an ISO 8601 date-time; a crafted package's `created_at` of 8.7e15 (past ECMAScript's dates) or a batch's
// `first_ts` in year 285 000 was imported, and then the site, its lists or the batch answered 500 (one import itself
// did). Such a row is refused 422 PackageInvalid naming the part, row and column, and nothing is written.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { gunzipSync, gzipSync } from 'node:zlib'
import { harness, testDialects } from './harness.ts'
import { NO_RATE_LIMIT, seedTenant, snapshotDiff, snapshotOrg } from './hardening/support.ts'
import { apply, repack, stage, unpack } from './support/tenant-package.ts'

const RULE = 'epoch milliseconds from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z'

for (const dialect of testDialects()) {
  test(`${dialect}: a tenant package's time outside years 0000 to 9999 is refused 422 naming part, row and column; nothing is written (session 23)`, async (t) => {
    const h = await harness(t, dialect, NO_RATE_LIMIT)
    const tenant = await seedTenant(h, 'PT')
    const cred = { org: tenant.owner.org, apiKey: tenant.owner.apiKey! }
    const exported = await h.inject(tenant.owner, { method: 'GET', url: `/api/admin/orgs/${tenant.ids.slug}/tenant/export` })
    assert.equal(exported.statusCode, 200)
    const reads = [
      `/api/historian/import-batches/${tenant.ids.batch}`,
      `/api/sites/${tenant.ids.site}`,
      '/api/sites',
      `/api/sites/${tenant.ids.site}/instances`,
      `/api/sites/${tenant.ids.site}/alarms`,
    ]
    const before = await snapshotOrg(h, tenant.org.id)
    const cases: Array<[string, string, number]> = [
      ['historian_batches', 'first_ts', 9e15],
      ['historian_batches', 'last_ts', -62_167_219_200_001],
      ['sites', 'created_at', 8.7e15],
      ['instances', 'created_at', -9e15],
      ['alarms', 'raised_at', 253_402_300_800_000],
      ['historian_samples', 'ts', 253_402_300_800_000],
    ]
    for (const [part, column, value] of cases) {
      const { header, parts } = unpack(exported.rawPayload)
      const rows = parts.get(part)!
      rows[0] = { ...rows[0]!, [column]: value }
      assert.equal((await stage(h, cred, await repack(header, parts))).statusCode, 200)
      const res = await apply(h, cred, '?force=true')
      const body = res.json() as Record<string, unknown>
      assert.deepEqual(
        [res.statusCode, body.code, body.part, body.row, body.column, body.rule, body.reason],
        [422, 'PackageInvalid', part, 1, column, 'type', `row 1 of part ${part}: ${column} breaks a type rule of this server's table (it holds ${RULE})`],
        `${part}.${column} = ${value}`,
      )
    }
    const changed = snapshotDiff(before, await snapshotOrg(h, tenant.org.id)).filter((d) => !d.startsWith('tenant_import_')) // the staged package
    assert.deepEqual(changed, [], 'no row of the organisation changed')
    for (const url of reads) assert.equal((await h.inject(tenant.owner, { method: 'GET', url })).statusCode, 200, url)

    // The last instant of 9999 is a time like any other: imported, and read back.
    const { header, parts } = unpack(exported.rawPayload)
    parts.set(
      'sites',
      parts.get('sites')!.map((row) => (row.code === tenant.ids.site ? { ...row, updated_at: 253_402_300_799_999 } : row)),
    )
    assert.equal((await stage(h, cred, await repack(header, parts))).statusCode, 200)
    const applied = await apply(h, cred, '?force=true')
    assert.equal(applied.statusCode, 200, applied.body)
    const site = await h.inject(tenant.owner, { method: 'GET', url: `/api/sites/${tenant.ids.site}` })
    assert.equal(site.statusCode, 200, site.body)
    assert.equal((site.json() as { updatedAt: string }).updatedAt, '9999-12-31T23:59:59.999Z')
  })
}

for (const dialect of testDialects()) {
  test(`${dialect}: a tenant package holding a byte that is not UTF-8 is refused 422 naming its line, even with checksums that match its decoded text; nothing is staged (session 23)`, async (t) => {
    const h = await harness(t, dialect, NO_RATE_LIMIT)
    const tenant = await seedTenant(h, 'PU')
    const cred = { org: tenant.owner.org, apiKey: tenant.owner.apiKey! }
    const exported = await h.inject(tenant.owner, { method: 'GET', url: `/api/admin/orgs/${tenant.ids.slug}/tenant/export` })
    const { header, parts } = unpack(exported.rawPayload)
    parts.set(
      'sites',
      parts.get('sites')!.map((row) => ({ ...row, name: `${String(row.name)}\ufffd` })),
    )
    // The checksums are those of the text with U+FFFD, which is what decoding 0xFF used to give: only the byte differs.
    const text = gunzipSync(await repack(header, parts))
    const marker = Buffer.from('\ufffd')
    const at = text.indexOf(marker)
    const line = text.subarray(0, at).toString('utf8').split('\n').length
    const crafted = gzipSync(Buffer.concat([text.subarray(0, at), Buffer.from([0xff]), text.subarray(at + marker.length)]))
    const before = await snapshotOrg(h, tenant.org.id)
    const res = await stage(h, cred, crafted)
    assert.equal(res.statusCode, 422, res.body)
    const body = res.json() as { code: string; detail: string }
    assert.equal(body.code, 'PackageInvalid')
    assert.match(body.detail, new RegExp(`line ${line} is not UTF-8 text`))
    assert.deepEqual(snapshotDiff(before, await snapshotOrg(h, tenant.org.id)), [], 'nothing staged or written')
  })
}
