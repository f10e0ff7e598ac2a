// Session 21 (hostile review): a crafted package whose header fields were of another type was stored and then its
// staging's answer failed to serialise (a 500); one that repeats a row's key within a batch was a 500 on PostgreSQL
// (one upsert may not write a key twice) and counted twice on SQLite; a sample's or tag mark's tag key of a few KiB was a
// 500 on PostgreSQL (its key index refused it) and stored on SQLite. Each is 422 PackageInvalid naming the rule.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { gunzipSync, gzipSync } from 'node:zlib'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { NO_RATE_LIMIT } from '../../../test/hardening/support.ts'
import { harness, testDialects, type Harness } from '../../../test/harness.ts'
import { apply, repack, stage, unpack } from '../../../test/support/tenant-package.ts'
import type { Org } from '../../identity.ts'
import type { PackageHeader } from './format.ts'

type Cred = { org: Org; apiKey: string }

async function exported(h: Harness, cred: Cred) {
  assert.equal(
    (await h.inject(cred, { method: 'POST', url: '/api/sites', payload: { code: 'HX', name: 'Wash plant', timeZone: 'Australia/Sydney', status: 2 } }))
      .statusCode,
    201,
  )
  const res = await h.inject(cred, { method: 'GET', url: `/api/admin/orgs/${cred.org.slug}/tenant/export` })
  assert.equal(res.statusCode, 200, res.body)
  return unpack(res.rawPayload)
}

const TABLES_RULE = 'tables must be an array of table names (a-z, 0-9 and _, at most 63 characters)'

const siteCodes = async (h: Harness, cred: Cred) =>
  ((await h.inject(cred, { url: '/api/sites' })).json().items as Array<{ code: string }>).map((s) => s.code).sort()

for (const dialect of testDialects()) {
  describe(`${dialect}: crafted tenant packages`, () => {
    it('a header field of another type is refused at staging with 422 naming the field and its rule, and nothing stays staged', async (t) => {
      const h = await harness(t, dialect, NO_RATE_LIMIT)
      const { org, key } = await h.orgWithKey('owner')
      const cred = { org, apiKey: key }
      const { header, parts } = await exported(h, cred)
      const cases: Array<[string, (h: Record<string, unknown>) => void, string]> = [
        ['no exportedAt', (x) => delete x.exportedAt, 'exportedAt must be a string'],
        ['a numeric site', (x) => (x.site = 5), 'site must be a string or null'],
        ['a sourceMode whose toString is no function', (x) => (x.sourceMode = { toString: 1 }), 'sourceMode must be one of site, cloud'],
        ['a sourceMode of no mode', (x) => (x.sourceMode = 'moon'), 'sourceMode must be one of site, cloud'],
        ['an org slug that is an array', (x) => ((x.org as Record<string, unknown>).slug = ['a']), 'org.slug must be a string'],
        ['a table name that is a number', (x) => (x.tables = [...(x.tables as string[]), 7]), TABLES_RULE],
        // Every refusal may name a part: a name of 100 000 characters was echoed whole (session 26).
        ['a table name of 100 000 characters', (x) => (x.tables = [...(x.tables as string[]), 'p'.repeat(100_000)]), TABLES_RULE],
        ['a table name that is no SQL name', (x) => (x.tables = [...(x.tables as string[]), 'sites; drop']), TABLES_RULE],
      ]
      for (const [name, edit, rule] of cases) {
        const crafted = structuredClone(header) as unknown as Record<string, unknown>
        edit(crafted)
        const res = await stage(h, cred, await repack(crafted as unknown as PackageHeader, parts))
        const body = res.json()
        assert.deepEqual([res.statusCode, body.code, body.reason], [422, 'PackageInvalid', `the header's ${rule}`], `${name}: ${res.body}`)
        assert.equal((await apply(h, cred, '?force=true')).statusCode, 409, `${name}: nothing staged`)
      }
      assert.equal((await stage(h, cred, await repack(header, parts))).statusCode, 200, 'the header as exported stages')
    })

    it('what a refusal quotes of the package is bounded: a format version, a record type and a repeated key of 100 000 characters are quoted in 40 (session 26)', async (t) => {
      const h = await harness(t, dialect, NO_RATE_LIMIT)
      const { org, key } = await h.orgWithKey('owner')
      const cred = { org, apiKey: key }
      const { header, parts } = await exported(h, cred)
      const lines = gunzipSync(await repack(header, parts))
        .toString('utf8')
        .trimEnd()
        .split('\n')
      const long = 'v'.repeat(100_000)
      const withHeader = (edit: (x: Record<string, unknown>) => void) => {
        const first = JSON.parse(lines[0]!) as Record<string, unknown>
        edit(first)
        return [JSON.stringify(first), ...lines.slice(1)]
      }
      const crafted: Array<[string, string[]]> = [
        ['a format version', withHeader((x) => (x.formatVersion = long))],
        ['a record type', [lines[0]!, JSON.stringify({ type: long }), ...lines.slice(1)]],
      ]
      for (const [name, text] of crafted) {
        const res = await stage(h, cred, gzipSync(`${text.join('\n')}\n`))
        assert.equal(res.statusCode, 422, `${name}: ${res.body.slice(0, 200)}`)
        assert.match(res.json().detail, /'v{40}…' \(100000 characters\)/, name)
        assert.ok(res.body.length < 2_000, `${name}: the refusal holds ${res.body.length} characters`)
      }
      const sites = parts.get('sites')!
      sites.push({ ...sites[0]!, code: `D${'d'.repeat(40)}`, name: 'First' }, { ...sites[0]!, code: `D${'d'.repeat(40)}`, name: 'Second' })
      assert.equal((await stage(h, cred, await repack(header, parts))).statusCode, 200)
      const repeated = await apply(h, cred, '?force=true')
      assert.equal(repeated.statusCode, 422)
      assert.match(repeated.json().detail, /\(code 'Dd{39}…' \(41 characters\)\)/)
    })

    it('a row repeating the key of an earlier row of its batch is refused with 422 naming both rows, and nothing is written', async (t) => {
      const h = await harness(t, dialect, NO_RATE_LIMIT)
      const { org, key } = await h.orgWithKey('owner')
      const cred = { org, apiKey: key }
      const { header, parts } = await exported(h, cred)
      const sites = parts.get('sites')!
      const line = sites.length + 1
      // A key this organisation has not: both rows would be created, in one statement.
      sites.push({ ...sites[0]!, code: 'DUP', name: 'First' }, { ...sites[0]!, code: 'DUP', name: 'Second' })
      assert.equal((await stage(h, cred, await repack(header, parts))).statusCode, 200)
      for (const query of ['?force=true', '', '?dryRun=true']) {
        const res = await apply(h, cred, query)
        const body = res.json()
        assert.deepEqual(
          [res.statusCode, body.code, body.reason],
          [422, 'PackageInvalid', `row ${line + 1} of part sites repeats the key (code 'DUP') of row ${line}`],
          `${query}: ${res.body}`,
        )
      }
      assert.deepEqual(await siteCodes(h, cred), ['HX'], 'nothing written')
    })

    it("a sample or tag mark whose instance id or tag key is longer than an instance's is refused with 422 naming the column, and nothing is written", async (t) => {
      const h = await harness(t, dialect, NO_RATE_LIMIT)
      const { org, key } = await h.orgWithKey('owner')
      const cred = { org, apiKey: key }
      const { header, parts } = await exported(h, cred)
      const sample = {
        batch_id: 'bat_crafted',
        instance_id: 'ins_pump',
        quality: 192,
        site_code: 'HX',
        tag_key: 'flow',
        text: null,
        ts: 1_700_000_000_000,
        value: 1.5,
      }
      const mark = { site_code: 'HX', instance_id: 'ins_pump', tag_key: 'flow', interpolation: 'step', updated_at: 1_700_000_000_000 }
      const long = randomBytes(3000).toString('base64')
      const cases: Array<[string, string, Record<string, unknown>, string, string]> = [
        ['a tag key of 4 000 characters', 'historian_samples', { ...sample, tag_key: long }, 'tag_key', 'tagKey must have 1 to 200 characters'],
        [
          'an instance id of 101 characters',
          'historian_samples',
          { ...sample, instance_id: 'i'.repeat(101) },
          'instance_id',
          'instanceId must have 1 to 100 characters',
        ],
        ["a tag mark's tag key of 4 000 characters", 'historian_tag_marks', { ...mark, tag_key: long }, 'tag_key', 'tagKey must have 1 to 200 characters'],
      ]
      for (const [name, part, row, column, rule] of cases) {
        const crafted = new Map(parts)
        crafted.set(part, [row])
        assert.equal((await stage(h, cred, await repack(header, crafted))).statusCode, 200, name)
        const res = await apply(h, cred, '?force=true')
        const body = res.json()
        assert.deepEqual(
          [res.statusCode, body.code, body.reason],
          [422, 'PackageInvalid', `row 1 of part ${part}: ${column} breaks a rule of its field: ${rule}`],
          `${name}: ${res.body}`,
        )
      }
      for (const table of ['historian_series', 'historian_tag_marks']) {
        const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where org_id = ${org.id}`.execute(h.handle.db)
        assert.equal(Number(rows[0]!.n), 0, `nothing written to ${table}`)
      }
    })
  })
}
