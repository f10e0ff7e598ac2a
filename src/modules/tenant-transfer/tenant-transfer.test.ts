import assert from 'node:assert/strict'
import { gunzipSync, gzipSync } from 'node:zlib'
import { describe, it } from 'node:test'
import { harness, testDialects, type Harness } from '../../../test/harness.ts'
import type { Org } from '../../identity.ts'
import { apply, stage } from '../../../test/support/tenant-package.ts'

type Cred = { org: Org; apiKey: string }

async function exportOf(h: Harness, cred: Cred, query = ''): Promise<Buffer> {
  const res = await h.inject(cred, { method: 'GET', url: `/api/admin/orgs/${cred.org.slug}/tenant/export${query}` })
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.headers['content-type'], 'application/gzip')
  return res.rawPayload
}

/** The records of a package, by part, in a canonical order (packages compare by records, not bytes). */
function recordsOf(pkg: Buffer): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const line of gunzipSync(pkg).toString('utf8').trim().split('\n')) {
    const record = JSON.parse(line) as { type: string; part?: string; row?: unknown }
    if (record.type === 'row') (out[record.part!] ??= []).push(JSON.stringify(record.row))
  }
  for (const rows of Object.values(out)) rows.sort()
  return out
}

function rewrite(pkg: Buffer, edit: (lines: string[]) => string[]): Buffer {
  return gzipSync(Buffer.from(`${edit(gunzipSync(pkg).toString('utf8').trim().split('\n')).join('\n')}\n`))
}

async function seed(h: Harness, cred: Cred, code: string) {
  for (const [c, name] of [
    [code, 'Wash plant'],
    [`${code}-B`, 'Rail loadout'],
  ]) {
    assert.equal(
      (await h.inject(cred, { method: 'POST', url: '/api/sites', payload: { code: c, name, timeZone: 'Australia/Sydney', location: 'NSW', status: 2 } }))
        .statusCode,
      201,
    )
  }
  assert.equal(
    (
      await h.inject(cred, {
        method: 'POST',
        url: '/api/admin/api-keys',
        payload: { role: 'member', name: 'gateway', expiresAt: new Date(h.clock.now() + 90 * 86_400_000).toISOString() },
      })
    ).statusCode,
    201,
  )
}

for (const dialect of testDialects()) {
  describe(`${dialect}: tenant export and import`, () => {
    it('export streams a self-describing package: header, parts with counts and checksums, end record; never a verifier', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('owner')
      await seed(h, { org, apiKey: key }, 'P1')
      const lines = gunzipSync(await exportOf(h, { org, apiKey: key }))
        .toString('utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
      const header = lines[0]
      assert.equal(header.format, 'sitegrid-tenant-package')
      assert.equal(header.formatVersion, 1)
      assert.equal(header.sourceMode, 'site')
      assert.equal(header.org.id, org.id)
      assert.equal(lines.at(-1).type, 'end')
      assert.equal(lines.at(-1).counts.sites, 2)
      assert.equal(lines.at(-1).counts.api_keys, 2)
      assert.ok(lines.filter((l) => l.type === 'partEnd').every((l) => /^[0-9a-f]{64}$/.test(l.sha256)))
      const text = JSON.stringify(lines)
      assert.ok(!text.includes('verifier') && !text.includes(key))
      const site = (await h.inject({ org, apiKey: key }, { url: `/api/admin/orgs/${org.slug}/tenant/export?siteId=P1` })).rawPayload
      const siteRecords = recordsOf(site)
      assert.equal(siteRecords.sites?.length, 1)
      assert.equal(siteRecords.api_keys, undefined, 'a site export leaves organisation-wide parts out')
    })

    it('truncated, tampered, newer-version and other-organisation packages are refused with 422 PackageInvalid and change nothing', async (t) => {
      const h = await harness(t, dialect)
      const a = await h.orgWithKey('owner')
      const b = await h.orgWithKey('owner')
      const credA = { org: a.org, apiKey: a.key }
      const credB = { org: b.org, apiKey: b.key }
      await seed(h, credA, 'A1')
      const pkg = await exportOf(h, credA)
      const cases: Record<string, Buffer> = {
        truncated: gzipSync(gunzipSync(pkg).subarray(0, gunzipSync(pkg).length - 40)),
        tampered: rewrite(pkg, (lines) => lines.map((l) => l.replace('Wash plant', 'Wash plant!'))),
        droppedRow: rewrite(pkg, (lines) =>
          lines.filter((l, i) => !(i > 0 && l.includes('"part":"sites"') && l.includes('"type":"row"')) || l.includes('A1-B')),
        ),
        newerVersion: rewrite(pkg, (lines) => [lines[0]!.replace('"formatVersion":1', '"formatVersion":2'), ...lines.slice(1)]),
        notGzip: Buffer.from('hello'),
      }
      for (const [kind, body] of Object.entries(cases)) {
        const res = await stage(h, credA, body)
        assert.equal(res.statusCode, 422, kind)
        assert.equal(res.json().code, 'PackageInvalid', kind)
      }
      const foreign = await stage(h, credB, pkg)
      assert.equal(foreign.statusCode, 422)
      assert.equal(foreign.json().reason, 'another organisation')
      assert.equal((await apply(h, credB)).statusCode, 409, 'nothing staged after a refused package')
      assert.equal((await h.inject(credB, { url: '/api/sites' })).json().items.length, 0)
    })

    it('without force an import that would overwrite changes nothing and lists the conflicts; dryRun counts; force replaces', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('owner')
      const cred = { org, apiKey: key }
      await seed(h, cred, 'C1')
      const pkg = await exportOf(h, cred)
      await h.inject(cred, { method: 'PUT', url: '/api/sites/C1', payload: { name: 'Renamed' } })
      await h.inject(cred, { method: 'DELETE', url: '/api/sites/C1-B?confirm=C1-B' })
      assert.equal((await stage(h, cred, pkg)).statusCode, 200)
      const dry = await apply(h, cred, '?dryRun=true')
      assert.equal(dry.statusCode, 200)
      assert.deepEqual(dry.json().parts.sites, { create: 1, replace: 1, unchanged: 0 })
      const refused = await apply(h, cred)
      assert.equal(refused.statusCode, 409)
      assert.equal(refused.json().conflictCount, 1)
      assert.deepEqual(refused.json().conflicts[0], { part: 'sites', key: { code: 'C1' } })
      assert.equal((await h.inject(cred, { url: '/api/sites/C1-B' })).statusCode, 404, 'not even the new site was created')
      assert.equal((await h.inject(cred, { url: '/api/sites/C1' })).json().name, 'Renamed')
      const forced = await apply(h, cred, '?force=true')
      assert.equal(forced.statusCode, 200)
      assert.equal((await h.inject(cred, { url: '/api/sites/C1' })).json().name, 'Wash plant')
      assert.equal((await h.inject(cred, { url: '/api/sites/C1-B' })).statusCode, 200)
      assert.equal((await apply(h, cred)).statusCode, 409, 'the staged package is consumed')
    })

    it('a forced import over a key that exists here replaces its metadata and keeps its verifier: the key still works', async (t) => {
      const h = await harness(t, dialect)
      const { org, key, keyId } = await h.orgWithKey('owner')
      const cred = { org, apiKey: key }
      const pkg = await exportOf(h, cred)
      await h.handle.db.updateTable('api_keys').set({ name: 'renamed here' }).where('id', '=', keyId).execute()
      assert.equal((await stage(h, cred, pkg)).statusCode, 200)
      const forced = await apply(h, cred, '?force=true')
      assert.equal(forced.statusCode, 200, forced.body)
      assert.equal(forced.json().parts.api_keys.replace, 1)
      const row = await h.handle.db.selectFrom('api_keys').select(['name', 'verifier']).where('id', '=', keyId).executeTakeFirstOrThrow()
      assert.equal(row.name, 'owner key')
      assert.doesNotMatch(row.verifier, /^moved:/)
      assert.equal((await h.inject(cred, { url: '/api/admin/api-keys' })).statusCode, 200)
    })

    it('an import naming its uploadId applies that upload only: after a later one was staged it answers 409 and writes nothing; the later applies', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('owner')
      const cred = { org, apiKey: key }
      await seed(h, cred, 'U1')
      const first = await exportOf(h, cred)
      await h.handle.db.deleteFrom('sites').where('org_id', '=', org.id).execute()
      const earlier = await stage(h, cred, first)
      assert.equal(earlier.statusCode, 200, earlier.body)
      const later = await stage(
        h,
        cred,
        rewrite(first, (lines) => lines),
      )
      assert.equal(later.statusCode, 200, later.body)
      assert.notEqual(earlier.json().uploadId, later.json().uploadId)
      const refused = await apply(h, cred, `?force=true&uploadId=${earlier.json().uploadId}`)
      assert.equal(refused.statusCode, 409, refused.body)
      assert.equal(refused.json().code, 'Conflict')
      assert.equal(refused.json().reason, 'replaced by a later upload')
      const sites = () => h.handle.db.selectFrom('sites').select('code').where('org_id', '=', org.id).execute()
      assert.deepEqual(await sites(), [], 'nothing written')
      const applied = await apply(h, cred, `?force=true&uploadId=${later.json().uploadId}`)
      assert.equal(applied.statusCode, 200, applied.body)
      assert.equal(applied.json().parts.sites.create, 2)
      assert.equal((await sites()).length, 2)
      assert.equal((await apply(h, cred, `?uploadId=${later.json().uploadId}`)).json().code, 'Conflict', 'an applied package is no longer staged')
    })

    it("members and admins are refused (403); another organisation's slug is the uniform 404", async (t) => {
      const h = await harness(t, dialect)
      const { org } = await h.orgWithKey('owner')
      const other = await h.orgWithKey('owner')
      const admin = await h.mintKey(org, 'admin')
      const cred = { org, apiKey: admin.plaintext }
      assert.equal((await h.inject(cred, { url: `/api/admin/orgs/${org.slug}/tenant/export` })).statusCode, 403)
      assert.equal((await apply(h, cred)).statusCode, 403)
      const owner = await h.mintKey(org, 'owner')
      const res = await h.inject({ org, apiKey: owner.plaintext }, { url: `/api/admin/orgs/${other.org.slug}/tenant/export` })
      assert.equal(res.statusCode, 404)
      assert.equal(res.json().code, 'NotFound')
    })
  })
}

if (testDialects().length === 2) {
  describe('round trip: a site server on SQLite to a cloud cell on PostgreSQL', () => {
    it('export, import elsewhere, export again: the two packages hold the same records', async (t) => {
      const site = await harness(t, 'sqlite', { SITEGRID_MODE: 'site' })
      const { org, key } = await site.orgWithKey('owner')
      await seed(site, { org, apiKey: key }, 'RT')
      const first = await exportOf(site, { org, apiKey: key })

      const cloud = await harness(t, 'postgres', { SITEGRID_MODE: 'cloud' })
      await cloud.handle.db.insertInto('orgs').values({ id: org.id, slug: org.slug, name: org.name, created_at: cloud.clock.now() }).execute()
      const operator = await cloud.mintKey(org, 'owner', { name: 'cloud operator' })
      const cred = { org, apiKey: operator.plaintext }
      assert.equal((await stage(cloud, cred, first)).statusCode, 200)
      const applied = await apply(cloud, cred)
      assert.equal(applied.statusCode, 200, applied.body)
      const second = await exportOf(cloud, cred)
      const a = recordsOf(first)
      const b = recordsOf(second)
      b.api_keys = b.api_keys!.filter((r) => !r.includes('cloud operator'))
      assert.deepEqual(b, a)
      assert.equal((await cloud.inject(cred, { url: '/api/sites/RT' })).json().timeZone, 'Australia/Sydney')
    })
  })
}
