// Issue 24, defects 9, 10, 11 and 13 on a real `sitegrid serve` (the PostgreSQL app role): deep nesting, NUL and lone
// surrogates, non-JSON content types, and an API key in a query string. Every refusal is the exact problem below on
// both databases (the same answer on each), nothing is written, and no log line holds a credential sent in a URL.
// test/hardening/fuzz.test.ts drives the same classes through every operation of the OpenAPI document.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { DEPTH_RULE, NUL_RULE, SURROGATE_RULE } from '../../src/http/input-guard.ts'
import { multipart } from '../../src/modules/historian/test-setup.ts'
import { repack, unpack } from '../support/tenant-package.ts'
import { harness, testDialects } from '../harness.ts'
import { httpRequest, startServer } from '../cli/process.ts'
import { deepJson } from './input-cases.ts'
import { processWorld, type ProcessWorld } from './process-support.ts'
import { NO_RATE_LIMIT, seedTenant, snapshotDiff, snapshotOrg, stableBody } from './support.ts'

const validationFailed = (where: string, pointer: string, message: string) => ({
  type: '/problems/ValidationFailed',
  title: 'The request is not valid',
  status: 400,
  detail: `${pointer.slice(1)}: ${message}`,
  code: 'ValidationFailed',
  errors: [{ in: where, pointer, message }],
})

const unsupported = (acceptedTypes: string[]) => ({
  type: '/problems/UnsupportedMediaType',
  title: 'Unsupported media type',
  status: 415,
  detail: `Send the body as ${acceptedTypes.join(' or ')}.`,
  code: 'UnsupportedMediaType',
  acceptedTypes,
})

const encodingRefused = (encoding: string, type: string) => ({
  type: '/problems/UnsupportedMediaType',
  title: 'Unsupported media type',
  status: 415,
  detail: `The body is sent with Content-Encoding ${encoding}: send ${type} unencoded (identity).`,
  code: 'UnsupportedMediaType',
  acceptedTypes: [type],
  acceptedEncodings: ['identity'],
})

/** The pointer of the first object past the 64 levels in a chain of `{"a": …}` under a top-level field (level 2). */
const tooDeepUnder = (field: string) => field + '/a'.repeat(63)

const API_KEY_IN_URL = `csk_${'Q7'.repeat(16)}`

/** `contentType`: application/json when there is a body, unless given; null sends none. */
interface Case {
  name: string
  method: string
  path: string
  body?: string
  contentType?: string | null
  encoding?: string
  expected: unknown
}

const CASES: Case[] = [
  { name: 'NUL in a path parameter', method: 'GET', path: '/api/sites/%00', expected: validationFailed('params', '/code', NUL_RULE) },
  { name: 'NUL in a query parameter', method: 'GET', path: '/api/sites?cursor=a%00b', expected: validationFailed('query', '/cursor', NUL_RULE) },
  {
    name: 'NUL in a body string',
    method: 'POST',
    path: '/api/sites',
    body: '{"code":"S2","name":"a\\u0000b"}',
    expected: validationFailed('body', '/name', NUL_RULE),
  },
  {
    name: 'a lone surrogate in a body string',
    method: 'POST',
    path: '/api/sites',
    body: '{"code":"S2","name":"a\\ud800b"}',
    expected: validationFailed('body', '/name', SURROGATE_RULE),
  },
  {
    name: 'an instance config 5 000 levels deep (a 25 KB body)',
    method: 'POST',
    path: '/api/sites/S1/instances',
    body: `{"id":"I1","name":"Pump","typeId":"pump","assetNumber":"A-I1","controllerId":"CTL","config":${deepJson(5_000)}}`,
    expected: validationFailed('body', tooDeepUnder('/config'), DEPTH_RULE),
  },
  {
    name: 'node metadata 2 000 levels deep (accepted before)',
    method: 'POST',
    path: '/api/sites/S1/electrical/nodes',
    body: `{"id":"N1","name":"Board","nodeType":3,"metadata":${deepJson(2_000)}}`,
    expected: validationFailed('body', tooDeepUnder('/metadata'), DEPTH_RULE),
  },
  {
    name: 'a whole body of 100 000 nested arrays',
    method: 'POST',
    path: '/api/sites',
    body: `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
    expected: validationFailed('body', '/0'.repeat(64), DEPTH_RULE),
  },
  {
    // 400 000 elements: walked without spreading them into one call (that overflowed the stack: a 500).
    name: 'a NUL at the end of a flat array of 400 000 elements',
    method: 'POST',
    path: '/api/sites',
    body: `[${'0,'.repeat(399_999)}"\\u0000"]`,
    expected: validationFailed('body', '/399999', NUL_RULE),
  },
  {
    name: 'NUL in a CSV body',
    method: 'POST',
    path: '/api/sites/S1/instances/bulk',
    contentType: 'text/csv',
    body: 'id,name,typeId,assetNumber,controllerId\nI1,Pu\u0000mp,pump,A-I1,CTL\n',
    expected: validationFailed('body', '/line/2', NUL_RULE),
  },
  {
    name: 'a text/plain body',
    method: 'POST',
    path: '/api/sites',
    contentType: 'text/plain',
    body: '{"code":"S2","name":"x"}',
    expected: unsupported(['application/json']),
  },
  {
    name: 'a body without a content type',
    method: 'POST',
    path: '/api/sites',
    contentType: null,
    body: '{"code":"S2","name":"x"}',
    expected: unsupported(['application/json']),
  },
  {
    name: 'a form body',
    method: 'PUT',
    path: '/api/sites/S1',
    contentType: 'application/x-www-form-urlencoded',
    body: 'name=x',
    expected: unsupported(['application/json']),
  },
  {
    name: 'a text/plain body to the bulk import',
    method: 'POST',
    path: '/api/sites/S1/instances/bulk',
    contentType: 'text/plain',
    body: 'id,name\n',
    expected: unsupported(['application/json', 'text/csv', 'application/csv']),
  },
  // Read as they were, a gzip's bytes answered "must not contain the NUL character" on a CSV line.
  {
    name: 'a gzip-encoded CSV body to the bulk import',
    method: 'POST',
    path: '/api/sites/S1/instances/bulk',
    contentType: 'text/csv',
    encoding: 'gzip',
    body: 'id,name,typeId,assetNumber,controllerId\nI1,Pump,pump,A-I1,CTL\n',
    expected: encodingRefused('gzip', 'text/csv'),
  },
  {
    name: 'a gzip-encoded live push in the line format',
    method: 'POST',
    path: '/api/sites/S1/historian/samples?batchKey=gw-1',
    contentType: 'text/plain',
    encoding: 'gzip',
    body: 'I1,speed,1700000000000,1\n',
    expected: encodingRefused('gzip', 'text/plain'),
  },
  {
    name: 'a br-encoded JSON body',
    method: 'POST',
    path: '/api/sites',
    encoding: 'br',
    body: '{"code":"S2","name":"x"}',
    expected: encodingRefused('br', 'application/json'),
  },
  {
    name: 'a gzip-encoded body of a type the operation does not read',
    method: 'POST',
    path: '/api/sites',
    contentType: 'text/xml',
    encoding: 'gzip',
    body: '<site/>',
    expected: unsupported(['application/json']),
  },
]

for (const dialect of testDialects()) {
  describe(`${dialect}: a served process refuses bad input before it reaches the database (issue 24)`, () => {
    it('deep nesting, NUL, a lone surrogate and non-JSON bodies answer the documented problem naming the field (or the accepted types), the same on both databases, and write nothing', async (t) => {
      const w = await processWorld(t, dialect, `input-${dialect === 'sqlite' ? 'sq' : 'pg'}`)
      const server = await startServer({ cwd: w.cwd, env: w.env })
      t.after(() => server.stop())
      const host = `${w.slug}.localhost`
      const call = (c: Omit<Case, 'name' | 'expected'>) => {
        const type = c.contentType === undefined ? (c.body === undefined ? null : 'application/json') : c.contentType
        return httpRequest(`${server.url}${c.path}`, {
          method: c.method,
          body: c.body,
          headers: {
            host,
            'x-api-key': w.ownerKey,
            ...(type === null ? {} : { 'content-type': type }),
            ...(c.encoding === undefined ? {} : { 'content-encoding': c.encoding }),
          },
        })
      }
      const json = (method: string, path: string, body: unknown) =>
        httpRequest(`${server.url}${path}`, {
          method,
          body: JSON.stringify(body),
          headers: { host, 'x-api-key': w.ownerKey, 'content-type': 'application/json' },
        })
      assert.equal((await json('POST', '/api/sites', { code: 'S1', name: 'Plant' })).status, 201)
      const controller = await json('POST', '/api/sites/S1/controllers', {
        name: 'PLC',
        platform: 1,
        assetNumber: 'A-C1',
        connection: { protocol: 'EtherNet/IP', ipAddress: '10.20.1.15' },
      })
      assert.equal(controller.status, 201, controller.body)
      const controllerId = String((controller.json() as { id: string }).id)
      const rowsBefore = await tenantRows(w.handle.db, w.orgId)

      const mismatches: string[] = []
      for (const c of CASES) {
        const res = await call({ ...c, body: c.body?.replace('"CTL"', JSON.stringify(controllerId)).replace(',CTL\n', `,${controllerId}\n`) })
        const got = { status: res.status, body: stableBody(res.body) }
        const want = { status: (c.expected as { status: number }).status, body: c.expected }
        try {
          assert.deepEqual(got, want)
        } catch {
          mismatches.push(`${c.name}: ${res.status} ${res.body.slice(0, 300)}`)
        }
      }
      assert.deepEqual(mismatches, [], 'every case answers its exact problem')
      assert.deepEqual(await tenantRows(w.handle.db, w.orgId), rowsBefore, 'the refused requests wrote nothing')
    })

    it('an API key or token sent in the URL is refused (401) and no log line holds it: the request log has the URL with its credentials redacted', async (t) => {
      const w = await processWorld(t, dialect, `input-log-${dialect === 'sqlite' ? 'sq' : 'pg'}`, { SITEGRID_LOG_LEVEL: 'info' })
      const server = await startServer({ cwd: w.cwd, env: w.env })
      t.after(() => server.stop())
      const get = (path: string) => httpRequest(`${server.url}${path}`, { headers: { host: `${w.slug}.localhost` } })
      assert.equal((await get(`/api/sites?API_Key=${API_KEY_IN_URL}&limit=5&token=abc123secret`)).status, 401)
      assert.equal((await get(`/api/sites/${API_KEY_IN_URL}`)).status, 401)
      await server.stop()
      const log = server.output()
      assert.ok(log.includes('"url":"/api/sites?API_Key=[redacted]&limit=5&token=[redacted]"'), 'the request log has the URL, its credentials redacted')
      assert.ok(log.includes('"url":"/api/sites/csk_[redacted]"'))
      assert.equal(log.includes(API_KEY_IN_URL.slice(4)), false, 'no line holds the key sent in the URL')
      assert.equal(log.includes('abc123secret'), false)
    })
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: a tenant package holds only what a request could have written (issue 24)`, () => {
    it('a row with NUL, a lone surrogate or JSON text nested past 64 levels is refused at staging: 422 PackageInvalid naming the row and column, nothing staged or imported (a NUL answered 500 at import on PostgreSQL, and a deep config made every later read of the instance 500)', async (t) => {
      const h = await harness(t, dialect, NO_RATE_LIMIT)
      const tenant = await seedTenant(h, 'PK')
      const base = `/api/admin/orgs/${tenant.ids.slug}/tenant`
      const exported = await h.inject(tenant.owner, { method: 'GET', url: `${base}/export` })
      assert.equal(exported.statusCode, 200)
      const { header, parts } = unpack(exported.rawPayload)
      const cases: Array<[string, string, string, unknown, string]> = [
        ['NUL in a text column', 'sites', 'name', 'a\u0000b', 'row 1 of part sites: name must not contain the NUL character (U+0000)'],
        [
          'a lone surrogate',
          'instances',
          'name',
          'a\ud800b',
          'row 1 of part instances: name must not contain a lone surrogate (U+D800 to U+DFFF without its pair)',
        ],
        ['a config 10 000 levels deep', 'instances', 'config', deepJson(10_000), `row 1 of part instances: config ${DEPTH_RULE}`],
      ]
      const before = await snapshotOrg(h, tenant.org.id)
      for (const [name, part, column, value, reason] of cases) {
        const changed = new Map([...parts].map(([k, rows]) => [k, structuredClone(rows)]))
        changed.get(part)![0]![column] = value
        const staged = await h.inject(tenant.owner, {
          method: 'PUT',
          url: `${base}/import/package`,
          payload: await repack(header, changed),
          headers: { 'content-type': 'application/gzip' },
        })
        assert.equal(staged.statusCode, 422, `${name}: ${staged.body}`)
        assert.deepEqual({ code: staged.json().code, reason: staged.json().reason }, { code: 'PackageInvalid', reason }, name)
        assert.equal((await h.inject(tenant.owner, { method: 'POST', url: `${base}/import?force=true` })).statusCode, 409, `${name}: nothing is staged`)
      }
      assert.deepEqual(snapshotDiff(before, await snapshotOrg(h, tenant.org.id)), [])
      const untouched = await repack(header, parts)
      assert.equal(
        (await h.inject(tenant.owner, { method: 'PUT', url: `${base}/import/package`, payload: untouched, headers: { 'content-type': 'application/gzip' } }))
          .statusCode,
        200,
        'the package as exported stages',
      )
    })
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: a historian upload with NUL is refused before anything is stored (issue 24)`, () => {
    it("NUL in a form field, a file name, the mapping or the trend file answers 400 naming the part or 422 HistorianCsvInvalid naming the file and line; nothing is stored and the site's batches still list (on PostgreSQL a NUL tag answered 500, an unmapped one made every later list 500)", async (t) => {
      const h = await harness(t, dialect, NO_RATE_LIMIT)
      const tenant = await seedTenant(h, 'HN')
      const { site, instance } = tenant.ids
      const mapping = `historian_tag,instance_id,tag_key\nT1,${instance},t0\n`
      const trend = 'Timestamp,TagName,Value,Quality\n2024-03-02 00:00:00,T1,1.5,100\n'
      const form = (fields: { site?: string; mapping?: string; trend?: string; trendName?: string }) =>
        multipart([
          { name: 'site_id', value: fields.site ?? site },
          { name: 'format', value: 'long' },
          { name: 'mapping_csv', filename: 'mapping.csv', content: fields.mapping ?? mapping },
          { name: 'trend_csv', filename: fields.trendName ?? 'trend.csv', content: fields.trend ?? trend },
        ])
      const cases: Array<[string, ReturnType<typeof form>, number, string, string, string]> = [
        ['a form field', form({ site: 'S\u0000' }), 400, 'ValidationFailed', '/site_id', NUL_RULE],
        ['a file name', form({ trendName: 't\u0000.csv' }), 400, 'ValidationFailed', '/trend_csv', `(its file name) ${NUL_RULE}`],
        [
          'a mapped tag',
          form({
            mapping: `historian_tag,instance_id,tag_key\nT\u00001,${instance},t0\n`,
            trend: 'Timestamp,TagName,Value,Quality\n2024-03-02 00:00:00,T\u00001,1.5,100\n',
          }),
          422,
          'HistorianCsvInvalid',
          '/mapping_csv',
          '',
        ],
        [
          'an unmapped tag',
          form({ trend: 'Timestamp,TagName,Value,Quality\n2024-03-03 00:00:00,X\u00009,1.5,100\n2024-03-03 00:00:00,T1,1.5,100\n' }),
          422,
          'HistorianCsvInvalid',
          '/trend_csv',
          '',
        ],
      ]
      const before = await snapshotOrg(h, tenant.org.id)
      for (const [name, upload, status, code, pointer, message] of cases) {
        const res = await h.inject(tenant.owner, { method: 'POST', url: '/api/historian/import-batches', payload: upload.payload, headers: upload.headers })
        const body = res.json() as { code: string; errors?: Array<{ pointer: string; message: string }> }
        assert.deepEqual([res.statusCode, body.code, body.errors?.[0]?.pointer], [status, code, pointer], `${name}: ${res.body}`)
        if (message) assert.equal(body.errors?.[0]?.message, message, name)
        else assert.match(String(body.errors?.[0]?.message), /NUL/, name)
      }
      assert.deepEqual(snapshotDiff(before, await snapshotOrg(h, tenant.org.id)), [])
      assert.equal((await h.inject(tenant.owner, { url: `/api/historian/import-batches?siteId=${site}` })).statusCode, 200)
    })
  })
}

/** The organisation's sites, instances, electrical nodes and audit events, as rows counted per table. */
async function tenantRows(db: ProcessWorld['handle']['db'], orgId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const table of ['sites', 'instances', 'electrical_nodes', 'audit_events']) {
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where org_id = ${orgId}`.execute(db)
    out[table] = Number(rows[0]!.n)
  }
  return out
}
